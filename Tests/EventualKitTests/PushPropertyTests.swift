import EventualAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing
@testable import EventualKit

/// The engine refuses on the device whatever would make the server refuse a push whole: over
/// changes made at random to every collection of every app (texts with control characters and
/// NULs, long texts and ids, numbers no record holds, fields of the wrong type), every change the
/// engine takes into its outbox is answered by the server on its own, applied or rejected, and
/// no push it makes is answered with anything but a 200.
@Suite("No push the engine makes is refused whole")
struct PushPropertyTests {
    @Test(.timeLimit(.minutes(1)), arguments: [1, 2, 3] as [UInt64])
    func everyChangeTheEngineQueuesIsAnsweredOnItsOwn(seed: UInt64) async throws {
        try await withLiveServer { server, scratch in
            // Given a device that notes the status of every push it makes
            let statuses = PushStatuses()
            let person = try await registerPerson(server, name: "random")
            let device = try Device(folder: scratch.url.appendingPathComponent("device"), serverURL: server, middlewares: [statuses])
            try await device.vault.signIn(email: person.email, password: person.password, client: device.link.client)
            // When it is asked to queue changes made at random, to every collection of every app
            var random = SeededGenerator(seed: seed)
            var queued = 0, refused = 0
            for collection in SyncCollections.all.values.sorted(by: { $0.name < $1.name }) {
                for _ in 0..<40 {
                    let change = RandomChange(of: collection, using: &random)
                    do {
                        try await device.store.write { tx in
                            try tx.recordChange(collection, id: change.recordID, fields: change.fields, adding: change.deltas,
                                                deleted: change.deleted, space: change.space)
                        }
                        queued += 1
                    } catch is LocalStoreError {
                        refused += 1
                    }
                }
            }
            // (both kinds happen, or the test proves nothing)
            #expect(queued > 50 && refused > 50, "\(queued) queued, \(refused) refused")
            let report = await device.engine.syncNow(pull: false)
            // Then every push was answered change by change, and every queued change was answered
            #expect(!statuses.all.isEmpty && statuses.all.allSatisfy { $0 == 200 }, "\(statuses.all)")
            #expect(report.failure == nil, "\(String(describing: report.failure))")
            #expect(report.sent + report.rejected == queued, "\(report.sent) sent, \(report.rejected) rejected of \(queued)")
            #expect(try device.outbox.counts().pending == 0)
        }
    }
}

/// One change made at random: values of its fields' types mostly, odd ones often (long texts,
/// emoji, quotes, extreme numbers that a record holds), and one in ten of its ids and values one
/// the server would refuse whole or alone (a control character, a number no record holds, a text
/// or an id too long, a value of another type).
private struct RandomChange {
    let recordID: String
    let space: String?
    let fields: [String: SyncValue]
    let deltas: [String: Double]
    let deleted: Bool

    init(of collection: SyncCollection, using random: inout SeededGenerator) {
        recordID = Self.odd(Self.ids, else: Self.badIDs, using: &random)
        space = Int.random(in: 0..<4, using: &random) == 0 ? Self.odd(Self.ids, else: Self.badIDs, using: &random) : nil
        deleted = Int.random(in: 0..<10, using: &random) == 0
        var fields: [String: SyncValue] = [:], deltas: [String: Double] = [:]
        for (name, field) in collection.fields.sorted(by: { $0.key < $1.key }) where Bool.random(using: &random) {
            if field.type == .counter, Bool.random(using: &random) {
                deltas[name] = Self.odd(Self.numbers, else: Self.badNumbers, using: &random)
            } else {
                fields[name] = Self.value(for: field, using: &random)
            }
        }
        self.fields = fields
        self.deltas = deltas
    }

    private static func value(for field: SyncField, using random: inout SeededGenerator) -> SyncValue {
        if Int.random(in: 0..<10, using: &random) == 0 {
            // NB: refused on the device (a control character, a number no record holds, a text too
            // long) or by the server alone (another type than the field's, a day that is none).
            switch Int.random(in: 0..<5, using: &random) {
            case 0: return .string(pick(badTexts, using: &random))
            case 1: return .number(pick(badNumbers, using: &random))
            case 2: return .integer(pick([SyncValue.largestMagnitude + 1, .max, .min], using: &random))
            case 3: return .string(String(repeating: pick(["é", "a", "👍", "\"", "\\", "\t"], using: &random), count: (field.maxLength ?? 64) + 1))
            default: return pick([.string("2026-02-30"), .boolean(true), .string("12"), .integer(3), .number(0.5)], using: &random)
            }
        }
        switch field.type {
        case .string:
            if Bool.random(using: &random), let maxLength = field.maxLength {
                return .string(String(repeating: pick(["é", "a", "👍", "\"", "\\", "\t", "e\u{301}"], using: &random),
                                      count: Int.random(in: 0...maxLength, using: &random)))
            }
            return .string(pick(texts, using: &random))
        case .date: return .string(pick(["2026-01-15", "2024-02-29", "0001-01-01", "9999-12-31"], using: &random))
        case .integer: return .integer(pick(integers, using: &random))
        case .number, .counter: return Bool.random(using: &random) ? .number(pick(numbers, using: &random)) : .integer(pick(integers, using: &random))
        case .boolean: return Int.random(in: 0..<4, using: &random) == 0 ? .null : .boolean(Bool.random(using: &random))
        }
    }

    /// One of `choices`, or one in ten times one of `bad`.
    private static func odd<T>(_ choices: [T], else bad: [T], using random: inout SeededGenerator) -> T {
        pick(Int.random(in: 0..<10, using: &random) == 0 ? bad : choices, using: &random)
    }

    private static func pick<T>(_ choices: [T], using random: inout SeededGenerator) -> T {
        choices[Int.random(in: 0..<choices.count, using: &random)]
    }

    private static let ids = [
        "item-1", UUID().uuidString, "quote\"back\\slash", String(repeating: "x", count: 128), String(repeating: "é", count: 128),
        String(repeating: "👍", count: 128), String(repeating: "e\u{301}", count: 128), "line\u{2028}separator", " ", "\u{FEFF}",
    ]
    private static let badIDs = ["", "tab\there", "nul\u{0}", "esc\u{1B}", "del\u{7F}", "c1\u{85}", String(repeating: "x", count: 129)]
    private static let texts = [
        "", "Oat milk", "two\nlines\r\n", "a\ttab", "\u{2028}\u{2029}", "quote\"back\\slash", "inPantry", "EUR", "👍🏽 emoji",
        "\u{FEFF}bom", "<script>", "'; DROP TABLE sync_records; --",
    ]
    private static let badTexts = ["nul\u{0}", "bell\u{7}", "esc\u{1B}[31m", "del\u{7F}", "c1\u{85}", "c1\u{9F}", "vt\u{0B}", "ff\u{0C}"]
    private static let integers: [Int64] = [0, 1, -1, 1_764_000_000_000, SyncValue.largestMagnitude, -SyncValue.largestMagnitude]
    private static let numbers: [Double] = [
        0, -0.0, 2.5, -1, .leastNormalMagnitude, .leastNonzeroMagnitude, Double(SyncValue.largestMagnitude), -Double(SyncValue.largestMagnitude), 1e15,
    ]
    private static let badNumbers: [Double] = [9_007_199_254_740_992, 1e17, 1e300, -1e308, .greatestFiniteMagnitude, .infinity, -.infinity, .nan]
}

/// Notes the status of every push answered.
private final class PushStatuses: ClientMiddleware, Sendable {
    private let statuses = Mutex<[Int]>([])

    var all: [Int] { statuses.withLock { $0 } }

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws
        -> (HTTPResponse, HTTPBody?) {
        let (response, answer) = try await next(request, body, baseURL)
        if operationID == "syncPush" { statuses.withLock { $0.append(response.status.code) } }
        return (response, answer)
    }
}
