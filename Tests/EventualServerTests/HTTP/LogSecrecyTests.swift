import Foundation
import Logging
import SQLKit
import Testing
@testable import EventualServer

@Suite("Secrets never reach the log, at any level", .timeLimit(.minutes(2)))
struct LogSecrecyTests {
    @Test(arguments: Backend.available)
    func everyErrorPathLogsNoHeaderBodyPasswordTokenOrKey(_ backend: Backend) async throws {
        let log = CapturedLog()
        try await withServer(backend, configure: { $0.logger = log.logger(); $0.logLevel = .trace }) { api, location in
            // Given a user, a session token and the server's keys
            let account = try await api.signUp("secretive")
            let barcode = Barcodes.unique()
            let sessionToken = try await api.sessionToken(barcode, as: account)
            // When every kind of failure happens with credentials in the request
            let password = "Sup3r-Secret-Passw0rd"
            _ = try await api.login(email: account.email, password: password)                          // 401
            _ = try await api.send(.post, "/auth/login", json: #"{"email":"x@example.com","password":"\#(password)""#) // bad JSON
            _ = try await api.send(.post, "/users", json: #"{"username":1,"email":"e@example.com","password":"\#(password)"}"#)
            _ = try await api.send(.get, "/users/me", headers: [.authorization: "Bearer \(account.accessToken)x"]) // 401
            _ = try await api.send(.post, "/products", headers: account.bearer, json: #"{"token":"\#(sessionToken)"}"#) // 400
            // And the storage fails under a request that carries a bearer token and a password-like body
            try await breakProductsTable(location)
            let failed = try await api.postProduct(barcode, name: password, token: sessionToken, as: account)
            #expect(failed.status == .internalServerError)
            let failedLogin = try await api.send(.post, "/auth/login", headers: account.bearer,
                                                 json: #"{"email":"\#(account.email)","password":"\#(account.password)"}"#)
            #expect(failedLogin.status == .created, "logins still work: \(failedLogin.text)")
            // Then the log says what failed
            let text = log.text
            #expect(text.contains("request failed"))
            #expect(text.contains("postProduct"), "the operation is named")
            // And holds no credential, body, token, token hash or key
            let keys = try await serverSecrets(location)
            let secrets = [password, account.password, account.accessToken, AccessToken.hash(account.accessToken), sessionToken] + keys
            for secret in secrets {
                #expect(!text.contains(secret), "the log holds a secret (\(secret.prefix(4))…)")
            }
            #expect(!text.lowercased().contains("bearer "))
            #expect(!text.lowercased().contains("authorization:"))
            #expect(!text.contains("Credentials("))
        }
    }

    /// Renames the products table from outside the server, so that the next product write fails.
    private func breakProductsTable(_ location: DatabaseLocation) async throws {
        let database = try await Database.open(location, logger: Logger(label: "test"))
        try await database.withConnection { sql in try await sql.raw("ALTER TABLE products RENAME TO products_gone").run() }
        await database.close()
    }

    private func serverSecrets(_ location: DatabaseLocation) async throws -> [String] {
        let database = try await Database.open(location, logger: Logger(label: "test"))
        let values = try await database.withConnection { sql in
            try await sql.select().column("value").from("server_secrets").all().map { try $0.decode(column: "value", as: String.self) }
        }
        await database.close()
        #expect(values.count >= 2)
        return values
    }
}
