import EventualKit
import EventualAPI
import Foundation

/// Why a SustainU action did not happen, in words for the person who asked; how to act on it is
/// the app's to add (a command's options, a screen's buttons).
public enum RecyclingError: Error, Equatable, CustomStringConvertible {
    case notSignedIn
    /// The person is still this device's, but the server refused their sign-in and the offline
    /// sign-in period is over: only an online sign-in opens SustainU again.
    case signInAgain(email: String)
    case needsConnectionForPoints
    case needsConnection(what: String, reason: String)
    case noSuchPoint(String)
    case invalidPosition(String)
    case invalidBarcode(String)
    case nothingToScan
    /// A scan's photo that cannot be attached, said after its path as every app says it.
    case photo(path: String, problem: AttachmentError)
    case unknownTrashType(String)
    case invalidTime(String)
    case invalidLimit(Int)
    case invalidLeaderboardLimit(Int)

    public var description: String {
        switch self {
        case .notSignedIn: return "Not signed in"
        case .signInAgain: return "The server no longer accepts this device's sign-in: sign in again online"
        case .needsConnectionForPoints: return "Connect once to load the recycling points; after that they work offline"
        case .needsConnection(let what, let reason) where RemoteFailure.isSilence(reason):
            return "The server is not answering, and this device has never loaded \(what): try again once it answers (\(reason))"
        case .needsConnection(let what, let reason): return "Connect once to load \(what); after that it works offline (\(reason))"
        case .noSuchPoint(let id): return "No recycling point \(Self.quoted(id))"
        case .invalidPosition(let text): return "'\(text)' is not a position: use LATITUDE,LONGITUDE like 47.7981,13.0465"
        case .invalidBarcode(let code) where code.trimmingCharacters(in: .whitespaces).isEmpty:
            return "The barcode is empty: give its 8, 12, 13 or 14 digits"
        case .invalidBarcode(let code): return "Not a barcode: \(Self.quoted(code)); expected 8, 12, 13 or 14 digits with a valid check digit"
        case .nothingToScan: return "Nothing to scan: give a photo or a barcode"
        case .photo(let path, let problem): return "\(path): \(problem)"
        case .unknownTrashType(let text):
            return "'\(text)' is not a trash type: use one of \(TrashKinds.names.joined(separator: ", "))"
        case .invalidTime(let text): return "'\(text)' is not a time: use HH:MM like 20:00, or 2026-11-23T20:00"
        case .invalidLimit(let limit): return "A list of points shows 1 to 1000 of them, not \(limit)"
        case .invalidLeaderboardLimit(let limit): return "The leaderboard shows 1 to 100 people, not \(limit)"
        }
    }
}


extension RecyclingError {
    /// What the person typed, quoted for a message: at most 40 characters, tabs and line breaks shown as \\t, \\n.
    public static func quoted(_ text: String) -> String {
        let escaped = text.unicodeScalars.map { scalar -> String in
            switch scalar {
            case "\t": return "\\t"
            case "\n": return "\\n"
            case "\r": return "\\r"
            default: return scalar.properties.generalCategory == .control ? "?" : String(scalar)
            }
        }.joined()
        return "'" + (escaped.count > 40 ? String(escaped.prefix(39)) + "…" : escaped) + "'"
    }
}

/// The trash types' names, for messages.
enum TrashKinds {
    static let names = TrashType.allCases.map(\.rawValue)
}
