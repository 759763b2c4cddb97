import EventualAPI
import Foundation
import OpenAPIRuntime

extension APIService {
    static let maxEventsPerBatch = 500
    /// Events from before this (2020-01-01) are a device clock gone wrong.
    static let earliestEventTime: Int64 = 1_577_836_800_000
    /// How far ahead of the server's clock an event may claim to be.
    static let eventClockAllowance: Int64 = 86_400_000

    /// The usage events, in the same database as everything else.
    var analytics: AnalyticsStore { AnalyticsStore(database: sync.database) }

    func recordEvents(_ input: Operations.RecordEvents.Input) async throws -> Operations.RecordEvents.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let userID = try await authenticatedUserID()
        guard body.events.count <= Self.maxEventsPerBatch else {
            throw APIError.badRequest("a batch carries at most \(Self.maxEventsPerBatch) events, not \(body.events.count): send them in several")
        }
        let now = UnixMillis.now()
        var filed: [FiledEvent] = []
        filed.reserveCapacity(body.events.count)
        var rejected: [Components.Schemas.EventRejection] = []
        var seen = Set<String>()
        var repeats = 0
        for (index, event) in body.events.enumerated() {
            guard (1...64).contains(event.id.unicodeScalars.count), TextRules.problem(in: event.id, .singleLine) == nil else {
                throw APIError.badRequest("events[\(index)].id must be 1 to 64 characters without control characters")
            }
            switch Self.check(event, now: now) {
            case .success(let event):
                if seen.insert(event.id).inserted { filed.append(event) } else { repeats += 1 }
            case .failure(let problem):
                rejected.append(.init(id: event.id, message: problem.message))
            }
        }
        let accepted = try await analytics.file(filed, userID: userID, now: now, quotas: quotas)
        return .ok(.init(body: .json(.init(accepted: accepted, duplicates: filed.count - accepted + repeats, rejected: rejected))))
    }

    /// Why an event is refused, for its entry in `rejected`.
    struct EventProblem: Error {
        let message: String
    }

    /// The event ready to file, or why it is refused: the envelope's forms, the device's clock,
    /// and `AnalyticsPrivacy`'s rules on its properties.
    static func check(_ event: Components.Schemas.AnalyticsEvent, now: Int64) -> Result<FiledEvent, EventProblem> {
        if let problem = AnalyticsPrivacy.nameProblem(event.app, what: "app", maxLength: 32)
            ?? AnalyticsPrivacy.nameProblem(event.platform, what: "platform", maxLength: 16) {
            return .failure(EventProblem(message: problem))
        }
        for (field, value, limit) in [("appVersion", event.appVersion, 32), ("sessionId", event.sessionId, 64)] {
            guard (1...limit).contains(value.unicodeScalars.count), TextRules.problem(in: value, .singleLine) == nil else {
                return .failure(EventProblem(message: "\(field) must be 1 to \(limit) characters without control characters"))
            }
        }
        guard event.at >= earliestEventTime, event.at <= now + eventClockAllowance else {
            return .failure(EventProblem(message: "at (\(event.at)) is before 2020 or more than a day ahead of the server's clock"))
        }
        var properties: [String: SyncValue] = [:]
        for (key, value) in event.properties.additionalProperties.value {
            switch value {
            case let text as String: properties[key] = .string(text)
            case let flag as Bool: properties[key] = .boolean(flag)
            case let whole as Int: properties[key] = .integer(Int64(whole))
            case let whole as Int64: properties[key] = .integer(whole)
            case let number as Double: properties[key] = Int64(exactly: number).map(SyncValue.integer) ?? .number(number)
            default:
                return .failure(EventProblem(message: "property '\(key.prefix(40))' must be text, a number or a flag"))
            }
        }
        if let problem = AnalyticsPrivacy.problem(name: event.name, properties: properties) {
            return .failure(EventProblem(message: problem))
        }
        let columns = AnalyticsColumns.of(event.name)
        // NB: not a JSONEncoder per event: that was a tenth of the time of filing a batch.
        let json = WireJSON.object(properties)
        return .success(FiledEvent(
            id: event.id, name: event.name, app: event.app, appVersion: event.appVersion, platform: event.platform,
            sessionID: event.sessionId, occurredAt: event.at,
            subject: columns.subject.flatMap { properties[$0] }.flatMap(Self.text),
            qualifier: columns.qualifier.flatMap { properties[$0] }.flatMap(Self.text),
            amount: columns.amount.flatMap { properties[$0]?.doubleValue },
            properties: json
        ))
    }

    private static func text(_ value: SyncValue) -> String? {
        switch value {
        case .string(let text): return text
        case .integer, .number, .boolean: return value.description
        case .null: return nil
        }
    }

    func analyticsQuestion(_ input: Operations.AnalyticsQuestion.Input) async throws -> Operations.AnalyticsQuestion.Output {
        _ = try await authenticatedAdminID()
        guard let question = AnalyticsQuestion(rawValue: input.path.question.rawValue) else {
            throw APIError.notFound("No question '\(input.path.question.rawValue)'")
        }
        let range = try AnalyticsRange(from: input.query.from, to: input.query.to)
        let rows = try await analytics.answer(question, range: range)
        let body = Components.Schemas.AnalyticsAnswer(
            question: question.rawValue, title: question.title, from: range.from, to: range.to, columns: question.answerColumns,
            rows: try rows.map { row in try row.map { try OpenAPIValueContainer(unvalidatedValue: $0.anyValue) } }
        )
        return .ok(.init(body: .json(body)))
    }
}
