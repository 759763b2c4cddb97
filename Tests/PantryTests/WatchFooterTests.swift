@testable import CommandLineSupport
import EventualKit
import Testing

/// The line under a watched list says how another device's change reaches it now, and never
/// that something is wrong when nothing is: an app without a live channel is not "not live".
@Suite("The line under a watched list", .timeLimit(.minutes(1)))
struct WatchFooterTests {
    @Test func eachStateHasItsLineAndAnAppWithoutAChannelIsNeverNotLive() {
        var status = SyncStatus()
        // Before anything is known, and online without the channel
        #expect(WatchOptions.footer(status, every: 5, live: true) == "○ not live: syncing every 5 s · Ctrl-C ends")
        #expect(WatchOptions.footer(status, every: 5, live: false) == "● syncing every 5 s · Ctrl-C ends")
        status.connectivity = .online
        #expect(WatchOptions.footer(status, every: 1, live: false) == "● syncing every second · Ctrl-C ends")
        // While the channel opens for the first time
        status.isGoingLive = true
        #expect(WatchOptions.footer(status, every: 5, live: true) == "○ connecting to the server · Ctrl-C ends")
        #expect(WatchOptions.footer(status, every: 5, live: false) == "● syncing every 5 s · Ctrl-C ends")
        status.isGoingLive = false
        // Live
        status.isLive = true
        #expect(WatchOptions.footer(status, every: 5, live: true) == "● live: other devices' changes show as they are made · Ctrl-C ends")
        // Offline, with or without a channel
        status.isLive = false
        status.connectivity = .offline
        for live in [true, false] {
            #expect(WatchOptions.footer(status, every: 60, live: live) == "○ offline: trying the server every 60 s · Ctrl-C ends")
        }
        // Signed out comes first
        status.needsSignIn = true
        #expect(WatchOptions.footer(status, every: 5, live: false) == "○ signed out: sign in again to sync · Ctrl-C ends")
    }
}
