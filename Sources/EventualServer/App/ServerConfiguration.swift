import Logging

/// Everything `buildApplication` needs to know; the executable fills it from its options.
public struct ServerConfiguration: Sendable {
    public var hostname: String
    public var port: Int
    public var database: DatabaseLocation
    public var logLevel: Logger.Level
    /// bcrypt's cost factor: 12 in production; tests lower it to keep the suite fast.
    public var bcryptCost: UInt8
    /// Largest request body accepted (an `img` may carry a base64 image up to this).
    public var maxBodySize: Int
    /// A base64url 32-byte key for session tokens; generated and kept in the database when nil.
    public var sessionKey: String?
    /// How far ahead of the server's clock a pushed change's HLC stamp may be; a stamp further
    /// ahead is refused, so that one device with a wrong clock cannot win every merge for ever.
    public var maxClockDrift: Duration

    public init(
        hostname: String = "127.0.0.1",
        port: Int = 8080,
        database: DatabaseLocation = .defaultSQLite,
        logLevel: Logger.Level = .info,
        bcryptCost: UInt8 = 12,
        maxBodySize: Int = 1024 * 1024,
        sessionKey: String? = nil,
        maxClockDrift: Duration = .seconds(5 * 60)
    ) {
        self.hostname = hostname
        self.port = port
        self.database = database
        self.logLevel = logLevel
        self.bcryptCost = bcryptCost
        self.maxBodySize = maxBodySize
        self.sessionKey = sessionKey
        self.maxClockDrift = maxClockDrift
    }
}
