import EventualAPI
import Foundation
import Logging
import Testing
@testable import EventualServer

/// A usage event as a test writes it: who, what, when (day offset and "HH:MM" from `AnalyticsDays.base`).
struct TestEvent: Sendable {
    let user: Account
    let name: String
    let at: Int64
    var app = "sustainu"
    var platform = "ios"
    var properties: [String: SyncValue] = [:]
    var id = UUID().uuidString.lowercased()

    var json: String {
        let props = properties.keys.sorted().map { key in "\(jsonString(key)):\(Self.json(properties[key]!))" }.joined(separator: ",")
        return #"{"id":\#(jsonString(id)),"name":\#(jsonString(name)),"app":\#(jsonString(app)),"appVersion":"1.0","#
            + #""platform":\#(jsonString(platform)),"sessionId":"s1","at":\#(at),"properties":{\#(props)}}"#
    }

    static func json(_ value: SyncValue) -> String {
        switch value {
        case .string(let text): return jsonString(text)
        default: return value.description
        }
    }
}

/// The days of the hand-made event sets: `base` is Monday 2026-03-02 (UTC).
enum AnalyticsDays {
    static let base = "2026-03-02"
    static let baseDay: Int64 = 20_514

    /// Unix ms of `time` ("HH:MM") on the day `offset` days after `base`.
    static func at(_ offset: Int64, _ time: String) -> Int64 {
        let parts = time.split(separator: ":").compactMap { Int64($0) }
        return (baseDay + offset) * 86_400_000 + parts[0] * 3_600_000 + parts[1] * 60_000
    }

    static func date(_ offset: Int64) -> String { AnalyticsRange.format(day: baseDay + offset) }
}

/// A cell of an answer, as JSON carries it; written in tests as literals.
enum Cell: Decodable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral {
    case text(String)
    case number(Double)
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null } else if let number = try? container.decode(Double.self) { self = .number(number) }
        else { self = .text(try container.decode(String.self)) }
    }

    init(stringLiteral value: String) { self = .text(value) }
    init(integerLiteral value: Int) { self = .number(Double(value)) }
    init(floatLiteral value: Double) { self = .number(value) }
    init(nilLiteral: ()) { self = .null }

    var description: String {
        switch self {
        case .text(let text): return "\"\(text)\""
        case .number(let number): return "\(number)"
        case .null: return "null"
        }
    }
}

struct AnswerJSON: Decodable {
    let question: String
    let title: String
    let from: String
    let to: String
    let columns: [String]
    let rows: [[Cell]]
}

struct EventBatchResultJSON: Decodable {
    struct Rejection: Decodable { let id: String; let message: String }
    let accepted: Int
    let duplicates: Int
    let rejected: [Rejection]
}

extension API {
    /// Posts events as their users, one batch per user, and requires each to be filed.
    func record(_ events: [TestEvent]) async throws {
        for (_, batch) in Dictionary(grouping: events, by: \.user.id) {
            let answer = try await postEvents(batch, as: batch[0].user)
            try #require(answer.status == .ok, "events: \(answer.text)")
            let result = try answer.decode(EventBatchResultJSON.self)
            try #require(result.accepted == batch.count && result.rejected.isEmpty, "events: \(answer.text)")
        }
    }

    func postEvents(_ events: [TestEvent], as account: Account) async throws -> Answer {
        try await send(.post, "/v1/events", headers: account.bearer, json: #"{"events":[\#(events.map(\.json).joined(separator: ","))]}"#)
    }

    /// The answer to `question` over `from`…`to` (days after `AnalyticsDays.base`).
    func ask(_ question: String, from: Int64 = 0, to: Int64 = 13, as admin: Account) async throws -> AnswerJSON {
        let answer = try await send(.get, "/v1/analytics/\(question)?from=\(AnalyticsDays.date(from))&to=\(AnalyticsDays.date(to))",
                                    headers: admin.bearer)
        try #require(answer.status == .ok, "\(question): \(answer.text)")
        return try answer.decode(AnswerJSON.self)
    }

    /// A new account made an admin, as `eventual-server user grant-admin` does.
    func signUpAdmin(at location: DatabaseLocation) async throws -> Account {
        let account = try await signUp("admin")
        try await grantAdmin(account, at: location)
        return account
    }
}

func grantAdmin(_ account: Account, at location: DatabaseLocation) async throws {
    let database = try await Database.open(location, logger: Logger(label: "test-admin"))
    let granted = try await RoleAdministration(database: database).set(.admin, email: account.email)
    await database.close()
    try #require(granted)
}
