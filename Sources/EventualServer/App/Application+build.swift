import EventualAPI
import EventualStorage
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import OpenAPIHummingbird
import OpenAPIRuntime

/// Builds the server: opens and migrates the database, loads its keys, and wires the contract's
/// handlers behind the edge responder (errors, body limit, metrics, request log).
public func buildApplication(_ configuration: ServerConfiguration) async throws -> some ApplicationProtocol {
    var logger = configuration.logger ?? Logger(label: "eventual-server")
    logger.logLevel = configuration.logLevel
    logger.notice("opening database", metadata: ["database": "\(configuration.database)"])

    let metrics = ServerMetrics()
    var options = Database.Options()
    options.busyTimeout = configuration.busyTimeout
    options.maxSQLiteBytes = configuration.maxSQLiteBytes
    options.postgresPoolSize = configuration.databasePoolSize
    options.databaseWaited = { metrics.databaseWaited($0) }
    let database = try await Database.open(configuration.database, logger: logger, options: options)
    let parts: ServerParts
    do {
        parts = try await buildParts(configuration, database: database, metrics: metrics, logger: logger)
    } catch {
        await database.close()
        throw error
    }
    let cap = configuration.connectionCap
    logger.notice("listening", metadata: [
        "address": "\(configuration.hostname):\(configuration.port)", "max_connections": "\(cap)",
        "idle_timeout_s": "\(configuration.idleTimeout.components.seconds)", "bcrypt_threads": "\(max(1, configuration.bcryptThreads))",
        "metrics": "\(configuration.metricsToken == nil ? "off" : "on, token required")",
    ])
    return Application(
        responder: parts.responder,
        server: .liveHTTP1(idleTimeout: .nanoseconds(configuration.idleTimeout.nanoseconds), live: parts.live),
        configuration: .init(address: .hostname(configuration.hostname, port: configuration.port), serverName: "eventual",
                             availableConnectionsDelegate: MaximumAvailableConnections(cap)),
        services: [
            database, parts.passwords,
            Housekeeping(database: database, idempotency: parts.idempotency, throttle: parts.throttle,
                         appliedChangeRetention: configuration.appliedChangeRetention, logger: logger,
                         attachments: AttachmentStore(database: database, limits: configuration.attachmentLimits)),
            ShutdownReport(metrics: metrics, logger: logger),
            parts.liveBus, parts.live, parts.appWatcher,
        ],
        logger: logger
    )
}

/// What `buildApplication` assembles before it makes the application.
private struct ServerParts {
    let responder: EdgeResponder<RouterResponder<ServerRequestContext>>
    let passwords: PasswordHasher
    let idempotency: Idempotency
    let throttle: Throttle
    let live: LiveRoute
    let liveBus: LiveBus
    let appWatcher: AppWatcher
}

private func buildParts(_ configuration: ServerConfiguration, database: Database, metrics: ServerMetrics,
                        logger: Logger) async throws -> ServerParts {
    let sessionKey: Data
    if let configured = configuration.sessionKey {
        guard let data = Base64URL.decode(configured), data.count == 32 else {
            throw ConfigurationError("the session key must be 32 bytes in base64url")
        }
        sessionKey = data
    } else {
        sessionKey = try await ServerSecrets.key(named: "session-token-key", in: database)
    }
    let fingerprintKey = try await ServerSecrets.key(named: "fingerprint-key", in: database)
    let idempotency = Idempotency(database: database, fingerprintKey: fingerprintKey)
    let throttle = Throttle(database: database, limits: configuration.throttle, keyBytes: fingerprintKey)
    let lookupReads = try await BarcodeLookupReads.prepare(database)
    let passwords = try await PasswordHasher.make(cost: configuration.bcryptCost, threads: configuration.bcryptThreads)
    let liveBus = LiveBus(hub: LiveHub(), database: database, logger: logger)
    // NB: the built-in apps are deployed at first start, as migrations are; then the server
    // serves what is deployed, and takes up a later deploy while it runs (`AppWatcher`).
    let deployedApps = DeployedApps(database: database, logger: logger)
    try await deployedApps.deployBuiltIns()
    let catalog = AppCatalog(try await deployedApps.current())
    let service = APIService(
        accounts: AccountStore(database: database),
        products: ProductStore(database: database),
        idempotency: idempotency,
        sync: SyncStore(database: database, catalog: catalog),
        pushValidation: PushValidation(catalog: catalog, maxClockDrift: configuration.maxClockDrift),
        lookupReads: lookupReads,
        passwords: passwords,
        sessionTokens: SessionTokenSigner(keyBytes: sessionKey),
        throttle: throttle,
        quotas: configuration.quotas,
        metrics: metrics,
        recycling: try Recycling(database: database, configuration: configuration),
        verification: EmailVerification(database: database, key: fingerprintKey, mailer: try configuration.mailDelivery.sender(),
                                        from: configuration.mailFrom, throttle: throttle, logger: logger),
        spending: SpendingStore(database: database),
        attachments: AttachmentStore(database: database, limits: configuration.attachmentLimits),
        live: liveBus,
        catalog: catalog
    )

    let router = Router(context: ServerRequestContext.self)
    let contract = try Contract.document()
    let contractLimits = try ContractLimits(document: String(decoding: contract, as: UTF8.self))
    router.get("openapi.yaml") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(bytes: contract)))
    }
    if let token = configuration.metricsToken {
        MetricsRoute(metrics: metrics, token: token).register(on: router)
    }
    do {
        try service.registerHandlers(
            on: router,
            configuration: .init(dateTranscoder: MillisecondDateTranscoder(), jsonEncodingOptions: []),
            middlewares: [ContractGate(limits: contractLimits)]
        )
        try DashboardRoutes(service: service).register(on: router)
    } catch {
        await passwords.shutdown()
        throw error
    }
    // NB: the live channel is a WebSocket, upgraded before the router (`LiveRoute`); a plain GET is told so.
    router.get(RouterPath(LiveWire.path)) { _, _ -> Response in
        throw APIError(.upgradeRequired, "\(LiveWire.path) is a WebSocket: open it with 'Upgrade: websocket'")
    }
    var extraRoutes: [String: [HTTPRequest.Method]] = ["/openapi.yaml": [.get], LiveWire.path: [.get]]
    extraRoutes.merge(DashboardRoutes.routes) { first, _ in first }
    if configuration.metricsToken != nil { extraRoutes["/metrics"] = [.get] }
    let routes = ContractRoutes(document: String(decoding: contract, as: UTF8.self), extra: extraRoutes)
    let responder = EdgeResponder(inner: router.buildResponder(), maxBodySize: configuration.maxBodySize, metrics: metrics,
                                  trustForwardedFor: configuration.trustForwardedFor, routes: routes, contract: contractLimits,
                                  bodyLimits: ["/v1/recycling/scans": configuration.maxScanBodySize],
                                  bodyLimitsUnder: [("/v1/attachments/", configuration.maxAttachmentChunkBytes)],
                                  lookups: LookupFastPath(service: service),
                                  compression: configuration.compressesPullPages ? .pullPages : nil)
    let live = LiveRoute(tokens: lookupReads, hub: liveBus.hub, heartbeat: configuration.liveHeartbeat, recheck: configuration.liveTokenRecheck)
    return ServerParts(responder: responder, passwords: passwords, idempotency: idempotency, throttle: throttle, live: live,
                       liveBus: liveBus,
                       appWatcher: AppWatcher(apps: deployedApps, catalog: catalog, logger: logger, interval: configuration.appRefresh))
}

/// A setting the server cannot start with.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
