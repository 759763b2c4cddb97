import CommandLineSupport
import EventualKit
import Pantry

/// What to tell a person whose contribution (a new product, a vote) did not reach the server in
/// the moment a command waits: that it waits, and, honestly, why.
enum DeliveryNote {
    /// The line for `what` ("your vote", "your contribution to the knowledge base") after `report`,
    /// which may have run out of the command's time.
    static func waiting(_ what: String, after report: SyncReport) -> String {
        DeviceWords.pantry.waiting(what, after: report) ?? "Not sent: the server refused \(what); pantry status says why."
    }

    /// After a change of an item: the line that says the server refused it (and why, and what to
    /// do), or that it waits, when it did not reach the server.
    static func sayWaiting(after report: SyncReport, of pantry: UserPantry) {
        let failures = report.rejected > 0 ? (try? pantry.device.failures()) ?? [] : []
        // NB: a refused change waits for no sync: saying it waits would not be true.
        if let refused = DeviceWords.pantry.refused("it", after: report, failures: failures) {
            print(Terminal.paint(Terminal.wrap(refused), .yellow))
        } else if let line = DeviceWords.pantry.waiting("the change", after: report) {
            print(Terminal.paint(line, .yellow))
        }
    }
}
