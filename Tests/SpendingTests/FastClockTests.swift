import EventualAPI
import EventualKit
import Foundation
import Testing
@testable import Spending

/// A device whose clock runs an hour fast records an expense now, by the server's time, for
/// everyone who shares it; an app clock a test moves (to a day of its choosing) is left alone.
@Suite("SpendiQ stamps by the server's time when the device's clock is off")
struct FastClockTests {
    static let hour: Int64 = 3_600_000

    private func ledger(_ scratch: ScratchFolder, appClock: @escaping @Sendable () -> Int64, serverAhead: Int64?) throws -> Ledger {
        var configuration = SpendingConfiguration(dataDirectory: scratch.url, serverURL: unreachableServer)
        configuration.clock = appClock
        configuration.timeZone = TimeZone(identifier: "UTC")!
        let store = try LocalStore(path: scratch.url.appendingPathComponent("spending.sqlite").path, migrations: SpendingSchema.migrations)
        let clock = DeviceClock(store: store, serverNow: { serverAhead.map { UnixMillis.now() + $0 } })
        return Ledger(store: store, configuration: configuration, serverClock: clock)
    }

    @Test(arguments: [(-hour, "an hour fast"), (2 * hour, "two hours slow"), (0, "right")])
    func anExpenseIsStampedByTheServersTime(_ serverAhead: Int64, _ device: String) async throws {
        let scratch = try ScratchFolder()
        let ledger = try ledger(scratch, appClock: { UnixMillis.now() }, serverAhead: serverAhead)
        try await ledger.addAccount(name: "Cash", currency: "EUR")
        let recorded = try await ledger.record(.expense, TransactionDetails(amount: "9", account: "Cash"))
        #expect(abs(recorded.transaction.occurredAt - (UnixMillis.now() + serverAhead)) < 60_000, "\(device): \(recorded.transaction.occurredAt - UnixMillis.now()) ms")
    }

    @Test func anAppClockMovedByATestOrAPersonsSettingIsNotMovedBack() async throws {
        // Given the app's clock set eight days ahead while this device's own clock agrees with the server
        let scratch = try ScratchFolder()
        let later = UnixMillis.now() + 8 * 24 * Self.hour
        let ledger = try ledger(scratch, appClock: { later }, serverAhead: 0)
        try await ledger.addAccount(name: "Cash", currency: "EUR")
        // Then a record made now is of that day
        #expect(try await ledger.record(.expense, TransactionDetails(amount: "9", account: "Cash")).transaction.occurredAt == later)
    }
}
