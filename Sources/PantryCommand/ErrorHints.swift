import CommandLineSupport
import Pantry

/// How `pantry` speaks of the Pantry model's errors: what to type to act on one, and which are a
/// value typed wrong (status 64).
struct ErrorHints: CommandHints {
    func message(for error: PantryError) -> String? {
        switch error {
        case .notSignedIn: "\(error): run `pantry login --email EMAIL` first"
        case .signInAgain(let email): "\(error) with `pantry login --email \(email)`"
        case .noSavedCopy: "\(error), or add it with --new"
        // NB: an item added on another device is not here until this one syncs.
        case .noSuchItem: "\(error) (yet: one added on another device arrives with `pantry sync`; `pantry list` shows what is here)"
        case .emptyItemID: "\(error): give its last 8 characters, as `pantry list` shows them"
        case .noCandidates: "\(error) with --new --name NAME"
        case .unknownProduct: "\(error), e.g. pantry vote 4006381333931 --pick 1"
        case .noHousehold: "\(error): pantry household list shows yours (after an invitation, accept it and sync)"
        case .ambiguousHousehold: "\(error), as pantry household list shows it"
        case .whichHousehold(let count):
            count == 0 ? "\(error): create one with pantry household create NAME, or see pantry household invitations"
                       : "\(error) by its name, or choose one once with pantry household use NAME"
        default: nil
        }
    }

    func isMalformedArgument(_ error: PantryError) -> Bool {
        switch error {
        case .invalidBarcode, .invalidExpiry, .invalidWindow, .invalidCoordinates, .invalidQuantity, .invalidRating, .pickOutOfRange,
             .emptyItemID, .itemIDTooShort, .invalidField:
            true
        default: false
        }
    }
}
