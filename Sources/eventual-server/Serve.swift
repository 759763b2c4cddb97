import ArgumentParser
import EventualServer
import Foundation
import Hummingbird
import Logging
import NIOCore

/// `eventual-server [serve]`: runs the server until SIGINT or SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the server until SIGINT or SIGTERM (the default command)."
    )

    @Option(help: "Address to listen on.")
    var hostname = "127.0.0.1"

    @Option(help: "Port to listen on (1 to 65535).")
    var port = 8080

    @OptionGroup var database: DatabaseOption

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(help: "bcrypt cost factor of new password hashes (4 to 31; each step doubles a login's CPU time).")
    var bcryptCost: UInt8 = 12

    @Option(help: "Threads that hash passwords, apart from request handling (default: half the cores, at least one).")
    var bcryptThreads: Int?

    @Option(help: "Failed logins for one account from one address within 15 minutes before further attempts get 429.")
    var maxFailedLogins = 10

    @Option(help: "Failed logins from one address, across all accounts, within 15 minutes before it gets 429.")
    var maxFailedLoginsPerAddress = 100

    @Option(help: "Accounts that one address may create per hour.")
    var maxRegistrationsPerHour = 30

    @Option(help: "Failed email verifications for one email within 24 hours (whatever the codes mailed meanwhile) before 429.")
    var maxFailedVerifications = 20

    @Option(help: "Failed email verifications from one address, across all emails, within an hour before 429.")
    var maxFailedVerificationsPerAddress = 30

    @Flag(help: "Count the last X-Forwarded-For address as the client's (only behind a reverse proxy that sets it).")
    var trustForwardedFor = false

    @Option(help: "Milliseconds an SQLite write waits for a lock another process holds before answering 503.")
    var busyTimeoutMs = 2000

    @Option(help: "Largest size of the SQLite file in MiB; past it writes answer 503 as on a full disk (default: no cap).")
    var maxDatabaseMib: Int?

    @Option(help: "Days applied sync change ids are remembered (the longest a device may stay offline).")
    var appliedChangeRetentionDays = 30

    @Option(help: "Synced records one user may store.")
    var maxSyncRecordsPerUser = 100_000

    @Option(help: "Products one user may create in the knowledge base.")
    var maxProductsPerUser = 5_000

    @Option(help: "MiB one user may store: synced records, the text and images of their products, and usage events.")
    var maxMibPerUser = 100

    @Option(help: "Usage events one user may file in 24 hours before 429.")
    var maxEventsPerUserPerDay = 10_000

    @Option(help: "Seconds before an idle or half-sent connection is closed.")
    var idleTimeout = 30

    @Option(help: "Most connections open at once (default: from the file-descriptor limit).")
    var maxConnections: Int?

    @Option(help: "Most PostgreSQL connections this process holds at once (1 to 1000; default: two per core, at least 4).")
    var databasePool: Int?

    @Option(help: "Token that opens GET /metrics (env EVENTUAL_METRICS_TOKEN); without one the route is off.")
    var metricsToken: String?

    @Option(help: "Base URL of an OpenAI-compatible API that classifies scan photos, e.g. http://127.0.0.1:11434/v1 (/chat/completions is appended; key in env VISION_API_KEY). Without it, photos are not classified.")
    var visionURL: String?

    @Option(help: "The vision model to ask (with --vision-url), e.g. llava or gpt-4o.")
    var visionModel: String?

    @Option(help: "Seconds the vision model may take to answer before a scan is answered 503 (retry later).")
    var visionTimeout = 20
    @Option(help: "Send mail (verification codes) through this SMTP relay: smtp://[user:password@]host[:port].")
    var smtpUrl: String?

    @Option(help: "Without --smtp-url, drop each mail as a file here (default: a 'mail' folder beside the SQLite database, or ./data/mail).")
    var mailDir: String?

    @Option(help: "The sender of the server's mail.")
    var mailFrom = "Eventual <no-reply@eventual.invalid>"

    func validate() throws {
        // NB: the listener takes the port modulo 65,536 (99999 listened on 34463), and 0 on a
        // port the system picks, which nobody could find.
        guard (1...65535).contains(port) else { throw ValidationError("--port must be from 1 to 65535, not \(port)") }
        guard maxFailedVerifications >= 1, maxFailedVerificationsPerAddress >= 1 else {
            throw ValidationError("--max-failed-verifications and --max-failed-verifications-per-address must be 1 or more")
        }
    }

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel.lowercased()) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        // NB: StreamLogHandler's lines, written off the request path (one access-log line per request).
        let output = BufferedLogOutput()
        LoggingSystem.bootstrap { label in BufferedLogHandler(label: label, output: output, level: level) }
        defer { output.flush() }
        let environment = ProcessInfo.processInfo.environment
        var throttle = ThrottleLimits()
        throttle.failedLoginsPerAccountAndAddress.limit = maxFailedLogins
        throttle.failedLoginsPerAddress.limit = maxFailedLoginsPerAddress
        throttle.registrationsPerAddress.limit = maxRegistrationsPerHour
        throttle.failedVerificationsPerEmail.limit = maxFailedVerifications
        throttle.failedVerificationsPerAddress.limit = maxFailedVerificationsPerAddress
        var quotas = Quotas()
        quotas.syncRecordsPerUser = maxSyncRecordsPerUser
        quotas.productsPerUser = maxProductsPerUser
        guard (1...Int(Int64.max / 1_048_576)).contains(maxMibPerUser) else {
            throw ValidationError("--max-mib-per-user must be from 1 to \(Int64.max / 1_048_576) (MiB)")
        }
        quotas.bytesPerUser = Int64(maxMibPerUser) * 1_048_576
        guard maxEventsPerUserPerDay >= 0 else { throw ValidationError("--max-events-per-user-per-day must be 0 or more") }
        quotas.eventsPerUserPerDay = maxEventsPerUserPerDay
        var configuration = ServerConfiguration(
            hostname: hostname, port: port, database: database.location, logLevel: level,
            sessionKey: environment["EVENTUAL_SESSION_KEY"]
        )
        guard (4...31).contains(bcryptCost) else { throw ValidationError("--bcrypt-cost must be from 4 to 31") }
        configuration.bcryptCost = bcryptCost
        if let bcryptThreads { configuration.bcryptThreads = bcryptThreads }
        configuration.throttle = throttle
        configuration.trustForwardedFor = trustForwardedFor
        configuration.busyTimeout = .milliseconds(busyTimeoutMs)
        configuration.maxSQLiteBytes = maxDatabaseMib.map { $0 * 1024 * 1024 }
        configuration.appliedChangeRetention = .seconds(appliedChangeRetentionDays * 24 * 3600)
        configuration.quotas = quotas
        configuration.idleTimeout = .seconds(idleTimeout)
        configuration.maxConnections = maxConnections
        if let databasePool {
            guard (1...1000).contains(databasePool) else { throw ValidationError("--database-pool must be from 1 to 1000 connections") }
            configuration.databasePoolSize = databasePool
        }
        configuration.metricsToken = metricsToken ?? environment["EVENTUAL_METRICS_TOKEN"]
        switch (visionURL, visionModel) {
        case (nil, nil):
            break
        case (let url?, let model?):
            guard let base = URL(string: url), ["http", "https"].contains(base.scheme?.lowercased() ?? ""), base.host != nil else {
                throw ValidationError("--vision-url must be an http:// or https:// URL, e.g. http://127.0.0.1:11434/v1")
            }
            guard (1...600).contains(visionTimeout) else { throw ValidationError("--vision-timeout must be from 1 to 600 seconds") }
            // NB: the key comes from the environment only, so that it never shows in `ps` or a shell history.
            configuration.vision = VisionConfiguration(baseURL: base, model: model, apiKey: environment["VISION_API_KEY"],
                                                       timeout: .seconds(visionTimeout))
        default:
            throw ValidationError("--vision-url and --vision-model go together")
        }
        if let smtpUrl {
            guard let url = URL(string: smtpUrl), url.scheme?.lowercased() == "smtp", url.host != nil else {
                throw ValidationError("--smtp-url must look like smtp://[user:password@]host[:port]")
            }
            configuration.mail = .smtp(url)
        } else if let mailDir {
            configuration.mail = .directory(mailDir)
        }
        configuration.mailFrom = mailFrom
        let app = try await buildApplication(configuration)
        do {
            try await app.runService()
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EACCES {
            // NB: NIO's own description names a system call and errno; a person needs which address and what to do.
            let problem = error.errnoCode == EADDRINUSE ? "is already in use (is another server running there?)" : "may not be used by this user"
            output.flush()
            FileHandle.standardError.write(Data("eventual-server: \(hostname):\(port) \(problem); --port chooses another\n".utf8))
            Foundation.exit(1)
        }
        var logger = Logger(label: "eventual-server")
        logger.logLevel = level
        logger.notice("stopped: database closed, password pool stopped")
    }
}
