import CommandLineSupport
import EventualKit

/// What to tell a person whose contribution (a new product, a vote) did not reach the server in
/// the moment a command waits: that it waits, and, honestly, why.
enum DeliveryNote {
    /// The line for `what` ("your vote", "your contribution to the knowledge base") after `report`,
    /// which may have run out of the command's time.
    static func waiting(_ what: String, after report: SyncReport) -> String {
        guard report.finished else { return "The server has not answered yet: \(what) waits and is sent at the next sync." }
        switch report.failure {
        case .unreachable?: return "Offline: \(what) waits and is sent when the server can be reached."
        case .unauthorized?: return "The server wants you to sign in again: \(what) waits until you do (pantry login)."
        case let failure?: return "Not sent yet (\(failure.description)): \(what) waits for the next sync."
        case nil: return "Not sent: the server refused \(what); pantry status says why."
        }
    }
}
