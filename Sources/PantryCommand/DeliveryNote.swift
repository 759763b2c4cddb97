import CommandLineSupport
import EventualKit

/// What to tell a person whose contribution (a new product, a vote) did not reach the server in
/// the moment a command waits: that it waits, and, honestly, why.
enum DeliveryNote {
    /// The line for `what` ("your vote", "your contribution to the knowledge base") after `report`,
    /// which may have run out of the command's time.
    static func waiting(_ what: String, after report: SyncReport) -> String {
        DeviceWords.pantry.waiting(what, after: report) ?? "Not sent: the server refused \(what); pantry status says why."
    }

    /// After a change of an item: the line that says it waits, when it did not reach the server.
    static func sayWaiting(after report: SyncReport) {
        if let line = DeviceWords.pantry.waiting("the change", after: report) { print(Terminal.paint(line, .yellow)) }
    }
}
