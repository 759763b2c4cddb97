import EventualAPI
import EventualKit
import Foundation
import Spending
import Synchronization

/// A clock a test moves by hand (Unix milliseconds).
public final class TestClock: Sendable {
    private let value: Mutex<Int64>
    public init(_ start: Int64 = UnixMillis.now()) { value = Mutex(start) }
    public var now: Int64 { value.withLock { $0 } }
    public func advance(_ duration: Duration) { value.withLock { $0 += duration.milliseconds } }
    public var function: @Sendable () -> Int64 { { self.now } }
}

/// The SpendiQ app on a device (a data directory), talking to `server`, with test-friendly settings.
public func spendingDevice(_ folder: URL, server: URL, clock: TestClock? = nil, timeZone: TimeZone = TimeZone(identifier: "UTC")!,
                           configure: (inout SpendingConfiguration) -> Void = { _ in }) -> SpendingApp {
    var configuration = SpendingConfiguration(dataDirectory: folder, serverURL: server)
    configuration.passwordRounds = 100_000
    configuration.requestTimeout = .seconds(30)
    configuration.timeouts = ServerLink.Timeouts(connect: .seconds(10), firstByte: .seconds(20))
    configuration.networkReadTimeout = .seconds(20)
    configuration.localCommandSyncBudget = .seconds(10)
    configuration.timeZone = timeZone
    if let clock { configuration.clock = clock.function }
    configure(&configuration)
    return SpendingApp(configuration: configuration)
}

/// A person registered through the SpendiQ app (their email verified or not).
public struct SpendingUser: Sendable {
    public let username: String
    public let email: String
    public let password: String

    /// Registers through the app, reads the code from the server's mail folder, and verifies it.
    public static func verified(on server: URL, scratch: ScratchFolder, name: String = "user") async throws -> SpendingUser {
        let user = try await registered(on: server, scratch: scratch, name: name)
        let app = spendingDevice(scratch.folder("reg-\(user.username)"), server: server)
        try await app.verify(code: try mailedCode(scratch, to: user.email), email: user.email)
        return user
    }

    /// Registers through the app, without verifying.
    public static func registered(on server: URL, scratch: ScratchFolder, name: String = "user") async throws -> SpendingUser {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let user = SpendingUser(username: "\(name)_\(suffix)", email: "\(name).\(suffix)@example.com", password: "pass-\(suffix)")
        _ = try await spendingDevice(scratch.folder("reg-\(user.username)"), server: server)
            .register(username: user.username, email: user.email, password: user.password)
        return user
    }
}

/// The newest code mailed to `address`, from the live server's mail folder (beside its database).
public func mailedCode(_ scratch: ScratchFolder, to address: String) throws -> String {
    let folder = scratch.url.appendingPathComponent("mail")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".eml") }.sorted()
    for file in files.reversed() {
        let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
        guard text.contains("To: \(address)\r\n") else { continue }
        return try code(in: text)
    }
    throw TestFailure("no mail to \(address) in \(folder.path)")
}

/// The 6 digits after "Your verification code is ".
public func code(in mail: String) throws -> String {
    guard let range = mail.range(of: "Your verification code is ") else { throw TestFailure("no code in the mail") }
    return String(mail[range.upperBound...].prefix(6))
}
