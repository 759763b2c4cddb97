import Foundation

/// What an app's account rules add to the ones every app has (SpendiQ's, seed 002).
public struct AccountPolicy: Sendable {
    /// Past `maxOfflineAge` without an online sign-in, the device's data is wiped at the next
    /// start, unless the person's changes still wait for the server (then they must go online).
    public var wipesAfterOfflineAge = false
    /// Offline, only the person whose data is on this device may sign in.
    public var onePersonPerDevice = false
    /// Whether the server lets a person who just signed in use the app (SpendiQ: a verified
    /// email); false signs them out again with `AccountError.notAdmitted`.
    public var admits: (@Sendable (ServerLink) async -> Bool)?

    public init(wipesAfterOfflineAge: Bool = false, onePersonPerDevice: Bool = false,
                admits: (@Sendable (ServerLink) async -> Bool)? = nil) {
        self.wipesAfterOfflineAge = wipesAfterOfflineAge
        self.onePersonPerDevice = onePersonPerDevice
        self.admits = admits
    }
}
