import EventualStorage
import Foundation
import Logging

/// Everything `buildApplication` needs to know; the executable fills it from its options.
public struct ServerConfiguration: Sendable {
    public var hostname: String
    public var port: Int
    public var database: DatabaseLocation
    public var logLevel: Logger.Level
    /// The logger the server writes to; nil for one labelled `eventual-server` from the logging system.
    public var logger: Logger?
    /// bcrypt's cost factor: 12 in production; tests lower it to keep the suite fast.
    public var bcryptCost: UInt8
    /// Threads of the pool that hashes passwords, apart from everything else (default: half the
    /// cores, at least one, so that a login flood leaves the other half to every other request).
    public var bcryptThreads: Int
    /// Largest request body accepted (an `img` may carry a base64 image up to this).
    public var maxBodySize: Int
    /// A base64url 32-byte key for session tokens; generated and kept in the database when nil.
    public var sessionKey: String?
    /// How far ahead of the server's clock a pushed change's HLC stamp may be; a stamp further
    /// ahead is refused, so that one device with a wrong clock cannot win every merge for ever.
    public var maxClockDrift: Duration
    /// Limits on failed logins and on registrations.
    public var throttle: ThrottleLimits
    /// Count the last `X-Forwarded-For` address as the client's: only behind a reverse proxy that sets it.
    public var trustForwardedFor: Bool
    /// Send pull pages gzip-compressed to a client that accepts it (`AnswerCompression`); off only
    /// to measure what it saves.
    public var compressesPullPages = true
    /// How long an SQLite write waits for a lock held by another process before answering 503.
    public var busyTimeout: Duration
    /// The largest the SQLite file may grow (nil: until the disk is full); past it writes answer 503.
    public var maxSQLiteBytes: Int?
    /// How long applied sync change ids are remembered: the longest a device may stay offline
    /// and still push what it queued (it must sign in again well before: tokens last 7 days).
    public var appliedChangeRetention: Duration
    /// Per-user storage quotas.
    public var quotas: Quotas
    /// A connection that sends nothing (or half a request) for this long is closed.
    public var idleTimeout: Duration
    /// Most connections open at once; further ones wait in the listen backlog (nil: from the file-descriptor limit).
    public var maxConnections: Int?
    /// Bearer token that opens `GET /metrics`; nil leaves the route off.
    public var metricsToken: String?
    /// Most PostgreSQL connections this process holds at once (nil: two per core, at least 4).
    public var databasePoolSize: Int?
    /// Largest body of `POST /v1/recycling/scans`, which carries a photo of up to 4 MiB in base64.
    public var maxScanBodySize: Int = 6 * 1024 * 1024
    /// The OpenAI-compatible API that classifies scan photos (`/chat/completions` is appended);
    /// nil: photos are not classified here.
    public var vision: VisionConfiguration?
    /// How mail (verification codes) leaves the server; nil: files in a `mail` folder beside the
    /// SQLite database, or in `./data/mail` on PostgreSQL.
    public var mail: MailDelivery? = nil
    /// The sender of the server's mail.
    public var mailFrom = "Eventual <no-reply@eventual.invalid>"
    /// The largest attachment (a blob uploaded in chunks), in bytes: 20 MiB.
    public var maxAttachmentBytes: Int64 = 20 * 1_048_576
    /// The largest body of one chunk of an attachment (`PATCH /v1/attachments/{sha256}`): 1 MiB.
    public var maxAttachmentChunkBytes: Int = 1_048_576
    /// How long a blob no record refers to, or an upload left incomplete, is kept after it was last
    /// touched: an upload may come before the record that refers to it.
    public var attachmentGracePeriod: Duration = .seconds(24 * 3600)
    /// How often the server pings a live channel; one ping unanswered by the next closes it.
    public var liveHeartbeat: Duration = .seconds(25)
    /// How often a running server reads whether an app was deployed (`AppWatcher`): a deploy is
    /// served within about this long, by every server process on the database.
    public var appRefresh: Duration = .seconds(1)
    /// How often a live channel's token is checked again (a sign-out through this server closes
    /// its channels at once; a revocation elsewhere, or the token's expiry, by this check).
    public var liveTokenRecheck: Duration = .seconds(60)

    public init(
        hostname: String = "127.0.0.1",
        port: Int = 8080,
        database: DatabaseLocation = .defaultSQLite,
        logLevel: Logger.Level = .info,
        logger: Logger? = nil,
        bcryptCost: UInt8 = 12,
        bcryptThreads: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2),
        maxBodySize: Int = 1024 * 1024,
        sessionKey: String? = nil,
        maxClockDrift: Duration = .seconds(5 * 60),
        throttle: ThrottleLimits = ThrottleLimits(),
        trustForwardedFor: Bool = false,
        busyTimeout: Duration = .seconds(2),
        maxSQLiteBytes: Int? = nil,
        appliedChangeRetention: Duration = .seconds(30 * 24 * 3600),
        quotas: Quotas = Quotas(),
        idleTimeout: Duration = .seconds(30),
        maxConnections: Int? = nil,
        metricsToken: String? = nil
    ) {
        self.hostname = hostname
        self.port = port
        self.database = database
        self.logLevel = logLevel
        self.logger = logger
        self.bcryptCost = bcryptCost
        self.bcryptThreads = bcryptThreads
        self.maxBodySize = maxBodySize
        self.sessionKey = sessionKey
        self.maxClockDrift = maxClockDrift
        self.throttle = throttle
        self.trustForwardedFor = trustForwardedFor
        self.busyTimeout = busyTimeout
        self.maxSQLiteBytes = maxSQLiteBytes
        self.appliedChangeRetention = appliedChangeRetention
        self.quotas = quotas
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.metricsToken = metricsToken
    }

    /// Where mail goes: `mail`, or files beside the database.
    var mailDelivery: MailDelivery {
        if let mail { return mail }
        switch database {
        case .sqlite(let path):
            return .directory(URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("mail", isDirectory: true).path)
        case .postgres: return .directory("./data/mail")
        }
    }

    /// The attachment settings as the store takes them.
    var attachmentLimits: AttachmentLimits {
        AttachmentLimits(maxBytes: maxAttachmentBytes, maxChunkBytes: maxAttachmentChunkBytes, gracePeriod: attachmentGracePeriod)
    }

    /// `maxConnections`, or what the process's file-descriptor limit leaves room for.
    var connectionCap: Int {
        if let maxConnections { return max(1, maxConnections) }
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < 1 << 20 else { return 4096 }
        // NB: keep descriptors for the database files, PostgreSQL connections and the listener.
        return max(64, min(16_384, Int(limit.rlim_cur) - 128))
    }
}
