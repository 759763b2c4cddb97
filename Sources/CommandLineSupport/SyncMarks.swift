import ArgumentParser
import EventualKit
import Foundation

/// The mark a list puts before a row that is not confirmed, the same in every app.
public enum SyncMark: String, Sendable {
    case none = " "
    case waiting = "⋯"
    case refused = "!"

    public init(_ state: SyncState) {
        switch state {
        case .confirmed: self = .none
        case .pending: self = .waiting
        case .failed: self = .refused
        }
    }

    /// The line under a list that says what its marks mean (nil when it shows none); `failures`
    /// is the command that lists the refused ones ("pantry failures").
    public static func legend(_ marks: [SyncMark], failures: String) -> String? {
        var legend: [String] = []
        if marks.contains(.waiting) { legend.append("\(waiting.rawValue) waits to be sent") }
        if marks.contains(.refused) { legend.append("\(refused.rawValue) refused by the server: \(failures)") }
        return legend.isEmpty ? nil : Terminal.wrap(legend.joined(separator: "; "))
    }
}

/// A row's sync state in `--json`: `{"state":"confirmed"}`, `{"state":"pending","count":1}`, `{"state":"failed","reason":"…"}`.
public struct SyncStateJSON: Encodable, Sendable {
    let state: SyncState

    public init(_ state: SyncState) { self.state = state }

    enum CodingKeys: String, CodingKey { case state, count, reason }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch state {
        case .confirmed: try container.encode("confirmed", forKey: .state)
        case .pending(let count):
            try container.encode("pending", forKey: .state)
            try container.encode(count, forKey: .count)
        case .failed(let reason):
            try container.encode("failed", forKey: .state)
            try container.encode(reason, forKey: .reason)
        }
    }
}

/// `--watch` and `--every` of a command that prints a list.
public struct WatchOptions: ParsableArguments {
    @Flag(help: "Keep it on screen, printed again when it changes (a sync from another device too), until Ctrl-C.")
    public var watch = false
    @Option(parsing: .unconditional, help: "With --watch: seconds between syncs while changes do not arrive live, 1 to 3600 (default 5).",
            transform: WatchOptions.seconds) public var every: Int?

    public init() {}

    /// Seconds between syncs while watching and the live channel is down.
    public var interval: Int { every ?? 5 }

    /// `--every`'s value: a whole number of seconds. NB: a word or a fraction was refused without
    /// the range; the range itself is checked in `validate`, with the value given.
    static func seconds(_ text: String) throws -> Int {
        // NB: ArgumentParser says before it which value of which option this is.
        guard let seconds = Int(text) else { throw ValidationError("give whole seconds, from 1 to 3600") }
        return seconds
    }

    public func validate() throws {
        guard let every else { return }
        // NB: silently ignored before: a person who typed it expected a list kept on screen.
        guard watch else { throw ValidationError("--every is the pace of --watch: add --watch, or leave --every out") }
        if !(1...3600).contains(every) { throw ValidationError("--every must be from 1 to 3600 seconds, not \(every)") }
    }

    /// Prints each text `render` makes of a snapshot that shows something new, until SIGINT or
    /// SIGTERM (then it returns, status 0, never mid-print). Meanwhile the engine syncs in the
    /// background, as a phone's app does while its screen is open: at once, after a local write,
    /// when the server signals another device's change on the live channel, and every `every`
    /// seconds while that channel is down. On a terminal a list replaces the last one, with a
    /// line under it saying how changes arrive (`footer`), drawn again when that changes; piped,
    /// each list follows the last after a blank line (`json`: one per line), and nothing else.
    public func run<Value: Sendable>(_ snapshots: AsyncThrowingStream<Value, any Error>, json: Bool, engine: SyncEngine,
                                     render: @escaping @Sendable (Value) throws -> String) async throws {
        let interval = interval
        let live = engine.holdsLiveChannel
        let onTerminal = !json && Terminal.stdoutIsTTY
        // NB: the engine is not stopped after: the process ends with the watch, and a round in
        // flight is one the outbox takes up again at the next start, as after a crash.
        try await Interruption.untilSignalled {
            let (pages, next) = AsyncThrowingStream.makeStream(of: Page.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for try await snapshot in snapshots { next.yield(.list(try render(snapshot))) }
                        next.finish()
                    } catch {
                        next.finish(throwing: error)
                    }
                }
                // NB: a reader that went away (`| head`) ends the watch now, not at its next print,
                // which may be hours away when nothing changes.
                group.addTask {
                    while !Terminal.stdoutReaderGone { try await Task.sleep(for: .milliseconds(250)) }
                    next.finish()
                }
                if onTerminal {
                    group.addTask {
                        for await status in engine.status { next.yield(.footer(Self.footer(status, every: interval, live: live))) }
                    }
                }
                // NB: the first list is shown before the engine starts, which opens the channel at once.
                var starting = engine.currentStatus
                starting.isGoingLive = live
                var shown: String?, list: String?, footer: String?
                var started = false
                for try await page in pages {
                    switch page {
                    case .list(let text): list = text
                    // NB: what the status said before the engine started is `starting`'s.
                    case .footer(let text): if started { footer = text }
                    }
                    guard let list else { continue }
                    let text = onTerminal ? list + "\n\n" + (footer ?? Self.footer(starting, every: interval, live: live)) : list
                    guard text != shown else { continue }
                    shown = text
                    let page = json ? text + "\n" : (onTerminal ? "\u{1B}[H\u{1B}[2J" + text + "\n" : text + "\n\n")
                    // NB: printed whole and at once: a script reads each list as it comes, and a signal
                    // (handled, never its default action) only cancels the task, after the print.
                    print(page, terminator: "")
                    // NB: a reader that went away (`| head`) took what it wanted: the watch ends.
                    if fflush(nil) != 0 { break }
                    // NB: what the device holds is shown first, at once; the syncs start after it.
                    if !started {
                        started = true
                        await engine.start(every: .seconds(interval))
                    }
                }
                group.cancelAll()
            }
        }
    }

    private enum Page: Sendable {
        case list(String)
        case footer(String)
    }

    /// The line under a watched list: how another device's change reaches it now. `live`: the
    /// engine holds a live channel (an app with no synced collections, SustainU, has none: its
    /// changes are calls sent at each sync, and "not live" would say something is wrong).
    static func footer(_ status: SyncStatus, every seconds: Int, live: Bool) -> String {
        let pace = seconds == 1 ? "every second" : "every \(seconds) s"
        if status.needsSignIn { return "○ signed out: sign in again to sync · Ctrl-C ends" }
        if status.isLive { return "● live: other devices' changes show as they are made · Ctrl-C ends" }
        if status.connectivity == .offline { return "○ offline: trying the server \(pace) · Ctrl-C ends" }
        if live, status.isGoingLive { return "○ connecting to the server · Ctrl-C ends" }
        return live ? "○ not live: syncing \(pace) · Ctrl-C ends" : "● syncing \(pace) · Ctrl-C ends"
    }
}
