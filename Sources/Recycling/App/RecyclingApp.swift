import EventualAPI
import EventualKit
import Foundation

/// SustainU on one device: accounts (register, sign in online or offline, sign out, who am I)
/// and the signed-in person's recycling, as every app has them (`AppHost`).
public typealias RecyclingApp = AppHost<UserRecycling>

/// The outcome of a sign-in: the person's recycling, and whether what works offline was loaded.
public typealias SignedIn = AppSignIn<UserRecycling>

extension AppSignIn where User == UserRecycling {
    public var recycling: UserRecycling { user }
    /// The points, the packaging catalogue and the tips were loaded for offline use.
    public var catalogueLoaded: Bool { preparedForOffline }
}

extension UserRecycling: AppUser {
    public typealias Configuration = RecyclingConfiguration
    /// The app's version, as its usage events carry it.
    public static let version = "1.0.0"
    public static var deviceApp: DeviceApp { .sustainU }

    public static func speak(_ error: AccountError) -> any Error {
        switch error {
        case .notSignedIn: RecyclingError.notSignedIn
        case .signInAgain(let email): RecyclingError.signInAgain(email: email)
        default: error
        }
    }

    /// Online, the points, the packaging catalogue and the tips are loaded, so that they work
    /// offline from then on.
    public func prepareForOffline() async -> Bool {
        (try? await withTimeLimit(.seconds(20)) { try await self.refreshCatalogues() }) != nil
    }
}
