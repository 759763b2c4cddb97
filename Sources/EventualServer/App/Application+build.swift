import EventualAPI
import Foundation
import Hummingbird
import Logging
import OpenAPIHummingbird
import OpenAPIRuntime

/// Builds the server: opens and migrates the database, loads its keys, and wires the contract's
/// handlers behind the edge responder (errors, body limit, request log).
public func buildApplication(_ configuration: ServerConfiguration) async throws -> some ApplicationProtocol {
    var logger = Logger(label: "eventual-server")
    logger.logLevel = configuration.logLevel
    logger.notice("opening database", metadata: ["database": "\(configuration.database)"])

    let database = try await Database.open(configuration.database, logger: logger)
    let responder: EdgeResponder<RouterResponder<BasicRequestContext>>
    do {
        responder = try await buildResponder(configuration, database: database)
    } catch {
        await database.close()
        throw error
    }
    return Application(
        responder: responder,
        configuration: .init(address: .hostname(configuration.hostname, port: configuration.port), serverName: "eventual"),
        services: [database, Housekeeping(database: database, logger: logger)],
        logger: logger
    )
}

private func buildResponder(
    _ configuration: ServerConfiguration, database: Database
) async throws -> EdgeResponder<RouterResponder<BasicRequestContext>> {
    let sessionKey: Data
    if let configured = configuration.sessionKey {
        guard let data = Base64URL.decode(configured), data.count == 32 else {
            throw ConfigurationError("the session key must be 32 bytes in base64url")
        }
        sessionKey = data
    } else {
        sessionKey = try await ServerSecrets.key(named: "session-token-key", in: database)
    }
    let service = APIService(
        accounts: AccountStore(database: database),
        products: ProductStore(database: database),
        idempotency: Idempotency(database: database),
        sync: SyncStore(database: database),
        syncRules: SyncRules(maxClockDrift: configuration.maxClockDrift),
        hotPath: try await HotPathReads.prepare(database),
        passwords: try await PasswordHasher.make(cost: configuration.bcryptCost),
        sessionTokens: SessionTokenSigner(keyBytes: sessionKey)
    )

    let router = Router(context: BasicRequestContext.self)
    let contract = try Contract.document()
    router.get("openapi.yaml") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(bytes: contract)))
    }
    try service.registerHandlers(
        on: router,
        configuration: .init(dateTranscoder: MillisecondDateTranscoder(), jsonEncodingOptions: [])
    )
    return EdgeResponder(inner: router.buildResponder(), maxBodySize: configuration.maxBodySize)
}

/// A setting the server cannot start with.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
