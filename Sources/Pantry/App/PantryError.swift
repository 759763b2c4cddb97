import Foundation

/// Why a pantry action did not happen, in words for the person who asked; how to act on it is
/// the app's to add (a command's options, a screen's buttons).
public enum PantryError: Error, Equatable, CustomStringConvertible {
    case notSignedIn
    /// The person is still this device's, but the server refused their sign-in and the offline
    /// sign-in period is over: only an online sign-in opens the pantry again.
    case signInAgain(email: String)
    case invalidBarcode(String)
    /// `silent`: the server was reached and did not answer in time, rather than not reached.
    case noSavedCopy(barcode: String, silent: Bool = false)
    case noSuchItem(String)
    case emptyItemID
    /// A part of an id shorter than the 8 characters lists show: too short to pick an item safely.
    case itemIDTooShort(String)
    case ambiguousItem(String, matches: Int)
    case noCandidates(barcode: String)
    case pickOutOfRange(Int, count: Int)
    case invalidExpiry(String)
    case invalidWindow(String)
    case invalidCoordinates(String)
    case invalidQuantity(String)
    case invalidRating(Int)
    case unknownProduct(String)
    case invalidField(String)
    case itemNotInPantry(String)
    /// An edit of an item consumed or thrown away: it takes none until it is brought back.
    case finishedItem(String, id: String)
    /// `restore` of an item that never left.
    case alreadyInPantry(String)
    case server(String)
    /// A change refused on the device for what it knows, as the server would refuse it (an owner
    /// leaving while others are in): not a mistake in what was typed (exit 1, not 64).
    case refused(String)
    case unreachable(String)
    /// A household named where none is (or the person's own space).
    case noHousehold(String)
    /// A name that more than one of the person's households has.
    case ambiguousHousehold(String)
    /// A household of that name, which the person is in already.
    case householdExists(String)
    /// No household named, and the person is in this many (not one).
    case whichHousehold(Int)
    /// A household where the person may only read.
    case viewerOf(String)

    public var description: String {
        switch self {
        case .notSignedIn: return "Not signed in"
        case .signInAgain: return "The server no longer accepts this device's sign-in: sign in again online"
        case .invalidBarcode(let code):
            return "\(code) is not a barcode: expected 8, 12, 13 or 14 digits with a valid check digit"
        case .noSavedCopy(let barcode, true):
            return "The server is not answering, and there is no saved copy of \(barcode): try again once it answers"
        case .noSavedCopy(let barcode, false):
            return "No connection and no saved copy of \(barcode): connect once to look it up"
        case .noSuchItem(let id): return "No item \(id) on this device"
        case .emptyItemID: return "The item's id is empty"
        case .itemIDTooShort(let id): return "'\(id)' is too short to pick an item safely: give the 8 characters of its id that lists show"
        case .ambiguousItem(let id, let matches): return "\(id) matches \(matches) items: give more of the id"
        case .noCandidates(let barcode): return "No product is known for \(barcode): create one"
        case .pickOutOfRange(let pick, 0): return "There is no candidate \(pick): the knowledge base has none for this barcode (add it with --new --name NAME)"
        case .pickOutOfRange(let pick, 1): return "There is no candidate \(pick): there is one, --pick 1"
        case .pickOutOfRange(let pick, let count): return "There is no candidate \(pick): pick 1 to \(count)"
        case .invalidExpiry(let text): return "'\(text)' is not an expiry: use a date like 2026-12-24, today, tomorrow, or +5d, +2w, +1m"
        case .invalidWindow(let text): return "'\(text)' is not a number of days: use 3d, 2w or 3"
        case .invalidCoordinates(let text): return "'\(text)' is not a position: use LATITUDE,LONGITUDE like 44.4949,11.3426"
        case .invalidQuantity(let text): return "'\(text)' is not a quantity: use a number from 0.001 to 1000000, to 3 decimals at most"
        case .invalidRating(let rating): return "\(rating) is not a rating: use -5 to 5 (0 takes your rating back)"
        case .unknownProduct(let id):
            return "\(id) is neither a barcode nor a product this device knows: vote by barcode"
        case .invalidField(let message): return message
        case .itemNotInPantry(let name): return "\(name) is no longer in the pantry"
        case .finishedItem(let name, let id):
            return "\(name) is no longer in the pantry, so it takes no edit: `pantry restore \(id.suffix(8))` brings it back first"
        case .alreadyInPantry(let name): return "\(name) is in the pantry already"
        case .server(let message), .refused(let message): return message
        case .unreachable(let reason): return reason
        case .noHousehold(let name): return "You are in no household called \(name) on this device"
        case .ambiguousHousehold(let name): return "You are in more than one household called \(name): give its id"
        case .householdExists(let name): return "You are in a household called \(name) already: give the new one another name"
        case .whichHousehold(let count):
            return count == 0 ? "You are in no household yet" : "You are in \(count) households: say which"
        case .viewerOf(let name): return "You can only look at \(name)'s items (viewer): its owner can make you an editor"
        }
    }
}
