import CommandLineSupport
import Recycling

/// How `sustainu` speaks of the Recycling model's errors: what to type to act on one, and which
/// are a value typed wrong (status 64).
struct ErrorHints: CommandHints {
    func message(for error: RecyclingError) -> String? {
        switch error {
        case .notSignedIn: "\(error): run `sustainu login --email EMAIL` first"
        case .signInAgain(let email): "\(error) with `sustainu login --email \(email)`"
        case .noSuchPoint: "\(error): `sustainu points` lists them with their ids"
        case .nothingToScan: "Nothing to scan: give --image PHOTO or --barcode CODE"
        case .invalidLimit(let limit): "A list of points shows 1 to 1000 of them (--limit), not \(limit)"
        case .invalidLeaderboardLimit(let limit): "The leaderboard shows 1 to 100 people (--limit), not \(limit)"
        default: nil
        }
    }

    func isMalformedArgument(_ error: RecyclingError) -> Bool {
        switch error {
        case .invalidPosition, .invalidBarcode, .nothingToScan, .unknownTrashType, .invalidTime, .invalidLimit, .invalidLeaderboardLimit: true
        default: false
        }
    }
}
