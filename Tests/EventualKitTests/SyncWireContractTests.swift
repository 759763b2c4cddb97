import EventualAPI
import Foundation
import GRDB
import OpenAPIRuntime
import Testing
@testable import EventualKit

/// The engine writes the push body and reads the pull page by hand (`SyncWire`, the hot path);
/// the server reads and writes them with the types generated from `openapi.yaml`. Whatever a
/// person types, each side reads what the other wrote, value for value.
@Suite("The engine's sync codec speaks openapi.yaml's shapes")
struct SyncWireContractTests {
    let store: LocalStore
    let mirror = TableMirror(SyncCollections.pantryItems, table: "items")

    init() throws {
        store = try LocalStore(writer: DatabaseQueue(), migrations: [itemsMigration])
    }

    /// Text at the edges of JSON escaping: quotes, backslashes, a tab and line breaks, the highest
    /// control character a description may hold, non-Latin scripts, an emoji, a lone `/`.
    static let awkward = ["say \"cheese\"", #"C:\pantry\"#, "tab\there\nand\r\nlines", "Ünïcödé ✓ 日本語 🥫", "a/b", ""]

    @Test func aPushBodyIsTheContractsSyncPushRequestValueForValue() async throws {
        try await store.write { tx in
            for (index, text) in Self.awkward.enumerated() {
                try mirror.insert("r\(index)", ["name": .string(text.isEmpty ? "x" : text), "description": .string(text),
                                                "quantity": .number(Double(index) + 0.25), "boughtAt": .integer(Int64(index) << 40),
                                                "status": .string("inPantry")],
                                  space: index.isMultiple(of: 2) ? "home \"&\" \\" : nil, in: tx)
            }
            try mirror.update("r1", setting: ["category": .null, "latitude": .number(-33.865143)], adding: ["quantity": -0.125], in: tx)
            try mirror.delete("r2", in: tx)
        }
        let entries = try Outbox(store: store).entries()
        let request = try JSONDecoder().decode(Components.Schemas.SyncPushRequest.self, from: SyncWire.pushBody(entries))

        #expect(request.changes.count == entries.count)
        for (entry, change) in zip(entries, request.changes) {
            let payload = try JSONDecoder().decode(ChangePayload.self, from: entry.payload)
            #expect(change.id == entry.id && change.collection == entry.operation && change.recordId == entry.recordID)
            #expect(change.space == entry.space)
            #expect(change.hlc == payload.hlc && change.deleted == payload.deleted)
            let fields = change.fields.additionalProperties.value.mapValues { SyncValue(any: $0) }
            #expect(Self.same(fields, payload.fields), "\(entry.recordID ?? ""): \(fields) against \(payload.fields)")
            #expect((change.deltas?.additionalProperties ?? [:]) == (payload.deltas ?? [:]))
        }
        #expect(request.changes.contains { $0.recordId == "r1" && $0.deltas?.additionalProperties == ["quantity": -0.125] })
        #expect(request.changes.contains { $0.recordId == "r2" && $0.deleted })
    }

    @Test func aContractPullPageReadsIntoTheEnginesPageValueForValue() throws {
        let records = Self.awkward.enumerated().map { index, text in
            let fields: [String: SyncValue] = ["name": .string(text), "quantity": .number(Double(index) / 3),
                                               "boughtAt": .integer(Int64.max - Int64(index)), "category": .null]
            return (fields, try! Components.Schemas.SyncRecord(
                collection: "pantry_items", recordId: "r\(index)",
                fields: .init(additionalProperties: OpenAPIObjectContainer(unvalidatedValue: fields.mapValues(\.anyValue))),
                deleted: index == 3, hlc: "1700000000000-0000\(index)-node", space: index.isMultiple(of: 2) ? "home" : "me",
                changedBy: index == 1 ? nil : "ann \"the\" cook"))
        }
        let response = Components.Schemas.SyncPullResponse(
            changes: records.map(\.1), cursor: "s1.me:7,home:9", hasMore: true,
            spaces: [.init(id: "me", name: "Personal", kind: .personal, role: .owner, app: nil),
                     .init(id: "home", name: "Home \"1\"", kind: .shared, role: .editor, app: "pantry", owner: "bob",
                           members: [.init(username: "bob", role: .owner, since: Date(timeIntervalSince1970: 1_700_000_000))])],
            removed: [.init(id: "old", name: "Old flat")], remaining: 42)

        // NB: dates as the server writes them (its generated server's configuration).
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(try MillisecondDateTranscoder().encode(date))
        }
        let page = try JSONDecoder().decode(SyncWire.PulledPage.self, from: try encoder.encode(response))

        #expect(page.cursor == response.cursor && page.hasMore && page.remaining == 42)
        #expect(page.personalSpace == "me")
        #expect(page.changes.count == records.count)
        for ((fields, wire), pulled) in zip(records, page.changes) {
            #expect(pulled.recordId == wire.recordId && pulled.collection == wire.collection && pulled.hlc == wire.hlc)
            #expect(pulled.deleted == wire.deleted && pulled.space == wire.space && pulled.changedBy == wire.changedBy)
            #expect(Self.same(pulled.fields, fields), "\(wire.recordId): \(pulled.fields) against \(fields)")
        }
        #expect(page.spaces?.map(\.name) == ["Personal", "Home \"1\""])
        #expect(page.spaces?[1].spaceMembers == [SpaceMember(username: "bob", role: .owner, since: Date(timeIntervalSince1970: 1_700_000_000))])
        #expect(page.removed?.map(\.id) == ["old"])
    }

    /// Equal field by field, a number equal to a number whatever its JSON spelling: JSON has one
    /// number, so 0.0 written is 0 read (and a REAL column takes either).
    static func same(_ left: [String: SyncValue], _ right: [String: SyncValue]) -> Bool {
        left.keys.sorted() == right.keys.sorted() && left.allSatisfy { name, value in
            switch (value, right[name]!) {
            case (.integer(let whole), .number(let number)), (.number(let number), .integer(let whole)): return Double(whole) == number
            case (let value, let other): return value == other
            }
        }
    }
}
