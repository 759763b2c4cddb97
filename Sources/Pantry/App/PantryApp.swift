import EventualAPI
import EventualKit
import Foundation

/// The app on one device: accounts (register, sign in online or offline, sign out, who am I)
/// and the signed-in user's pantry, as every app has them (`AppHost`).
public typealias PantryApp = AppHost<UserPantry>

/// The outcome of a sign-in: the user's pantry, and what the first sync fetched.
public typealias SignIn = AppSignIn<UserPantry>

extension AppSignIn where User == UserPantry {
    public var pantry: UserPantry { user }
}

extension UserPantry: AppUser {
    public typealias Configuration = PantryConfiguration
    /// The app's version, as its usage events carry it.
    public static let version = "1.0.0"
    public static var deviceApp: DeviceApp { .pantry }

    public static func speak(_ error: AccountError) -> any Error { PantryError(error) }
}

extension PantryError {
    /// An account's refusal in the pantry's words.
    init(_ error: AccountError) {
        switch error {
        case .notSignedIn, .noEmailToVerify: self = .notSignedIn
        case .signInAgain(let email): self = .signInAgain(email: email)
        case .unreachable(let reason): self = .unreachable(reason)
        // NB: a 400 refuses what was typed (a short password, a malformed email), as SpendiQ says it.
        case .invalid(let message): self = .invalidField(message.prefix(1).uppercased() + message.dropFirst())
        default: self = .server(error.description)
        }
    }
}
