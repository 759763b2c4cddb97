import EventualAPI
import EventualKit
import Foundation

/// SpendiQ on one device: accounts (register, verify the email, sign in online or offline, sign
/// out), the 7-day rule (its `DeviceApp`'s policy), and the signed-in person's data, as every
/// app has them (`AppHost`).
public typealias SpendingApp = AppHost<UserSpending>

/// The outcome of a sign-in: the person's data, and what the first sync fetched.
public typealias SpendingSignIn = AppSignIn<UserSpending>

extension AppSignIn where User == UserSpending {
    public var spending: UserSpending { user }
}

extension UserSpending: AppUser {
    public typealias Configuration = SpendingConfiguration
    /// The app's version, as its usage events carry it.
    public static let version = "1.0.0"
    public static var deviceApp: DeviceApp { .spendiQ }

    public static func speak(_ error: AccountError) -> any Error { SpendingError(error) }

    /// Every start records "last seen" (and the position when due).
    public func opened() async throws { try await recordStart() }
}

extension SpendingError {
    /// An account's refusal in SpendiQ's words.
    init(_ error: AccountError) {
        switch error {
        case .notSignedIn, .signInAgain: self = .notSignedIn
        case .noEmailToVerify: self = .noPendingRegistration
        case .unreachable(let reason): self = .unreachable(reason)
        // NB: a 400 refuses what was typed (a short password, a malformed email): a usage mistake, said as a sentence.
        case .invalid(let message): self = .invalidField(message.prefix(1).uppercased() + message.dropFirst())
        case .refused(let message): self = .server(message)
        case .emailAlreadyRegistered: self = .server(error.description)
        case .offlineTooLong(let days, let waiting, let email): self = .offlineTooLongWithPendingChanges(days: days, count: waiting, email: email)
        case .wipedAfterOfflineAge(let days): self = .wipedAfterOfflineAge(days: days)
        case .otherPersonOnDevice(let username): self = .otherPersonOnDevice(username: username)
        case .notAdmitted: self = .notVerified
        }
    }
}
