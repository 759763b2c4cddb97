import EventualAPI
import Crypto
import EventualStorage
import Foundation
import SQLKit

/// Replays of writes sent with an `Idempotency-Key`: the first answer is stored in the same
/// transaction as the write it reports, and a replay within 24 hours gets it back while nothing
/// new is created.
struct Idempotency: Sendable {
    static let window: TimeInterval = 24 * 3600
    static let maxKeyLength = 255

    let database: Database
    /// The server's key for fingerprints. NB: a plain SHA-256 of a registration's body (with its
    /// password) let anyone holding a copy of the database test passwords at SHA-256 speed; an
    /// HMAC under a key kept apart from the rows does not.
    let fingerprintKey: Data

    /// A request made under a key, by a caller (`scope`), with the fingerprint of its body.
    struct Request: Sendable {
        let scope: String
        let key: String
        let fingerprint: String
    }

    /// Validates the header and fingerprints the request; nil when no key was sent.
    func request<Body: Encodable>(key: String?, scope: String, body: Body) throws -> Request? {
        guard let key else { return nil }
        // NB: the generated server percent-decodes header values (its clients encode them); a lone
        // '%' decodes to nothing, hence the mention of '%' when the key arrives empty.
        guard (1...Self.maxKeyLength).contains(key.unicodeScalars.count) else {
            throw APIError.badRequest("Idempotency-Key must be 1 to \(Self.maxKeyLength) characters long"
                + (key.isEmpty ? ", without '%' (header values are read percent-decoded)" : ""))
        }
        try TextRules.check(key, field: "Idempotency-Key")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Request(scope: scope, key: key, fingerprint: mac(try encoder.encode(body)))
    }

    /// A scope that names its owner without storing it in clear (the email of a registration).
    func scope(_ kind: String, owner: String) -> String {
        "\(kind):" + mac(Data(owner.utf8))
    }

    private func mac(_ data: Data) -> String {
        Hex.encode(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: fingerprintKey)))
    }

    /// Runs `write` in a transaction unless `request`'s key has an answer already, which is
    /// returned instead. With no key it is a plain transaction.
    func perform<Answer: Codable & Sendable>(
        _ request: Request?,
        _ write: @escaping @Sendable (any SQLDatabase) async throws -> Answer
    ) async throws -> Answer {
        guard let request else { return try await database.transaction(write) }
        do {
            return try await database.transaction { sql in
                if let stored: Answer = try await stored(for: request, on: sql) { return stored }
                let answer = try await write(sql)
                try await sql.delete(from: "idempotency_keys")
                    .where("scope", .equal, request.scope).where("idempotency_key", .equal, request.key).run()
                try await sql.insert(into: "idempotency_keys")
                    .columns("scope", "idempotency_key", "request_hash", "status", "body", "created_at")
                    .values(SQLBind(request.scope), SQLBind(request.key), SQLBind(request.fingerprint), SQLBind(201),
                            SQLBind(try Self.encode(answer)), SQLBind(UnixMillis.now()))
                    .run()
                return answer
            }
        } catch let error as APIError {
            throw error
        } catch let error as Refusal {
            throw error
        } catch {
            // NB: on PostgreSQL two concurrent requests with one key both get here; the second one's
            // insert violates the primary key and rolls back, and then finds the first one's answer.
            let replay: Answer? = try? await database.withConnection { sql in try await stored(for: request, on: sql) }
            guard let replay else { throw error }
            return replay
        }
    }

    private func stored<Answer: Decodable>(for request: Request, on sql: any SQLDatabase) async throws -> Answer? {
        let cutoff = UnixMillis.now() - Int64(Self.window * 1000)
        guard let row = try await sql.select().columns("request_hash", "body").from("idempotency_keys")
            .where("scope", .equal, request.scope).where("idempotency_key", .equal, request.key)
            .where("created_at", .greaterThan, cutoff).first()
        else { return nil }
        guard try row.decode(column: "request_hash", as: String.self) == request.fingerprint else {
            throw APIError(.unprocessableContent, "Idempotency-Key was already used for a different request")
        }
        return try Self.decode(try row.decode(column: "body", as: String.self))
    }

    /// Forgets answers older than the window.
    func purge(now: Int64) async throws {
        try await database.withConnection { sql in
            try await sql.delete(from: "idempotency_keys")
                .where("created_at", .lessThanOrEqual, now - Int64(Self.window * 1000)).run()
        }
    }

    private static func encode<Answer: Encodable>(_ answer: Answer) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return String(decoding: try encoder.encode(answer), as: UTF8.self)
    }

    private static func decode<Answer: Decodable>(_ text: String) throws -> Answer {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try decoder.decode(Answer.self, from: Data(text.utf8))
    }
}
