import EventualAPI
import Foundation
import GRDB
import OpenAPIRuntime
import Testing
@testable import EventualKit

/// The engine writes the push body and reads the sync answers by hand (`SyncWire`, the hot path);
/// the server writes the same shapes (`SyncWire`, `SpaceSummary`, `SpaceDetails`, …) through the
/// types generated from `openapi.yaml`. Whatever a person types, each side reads what the other
/// wrote, value for value: what the server writes decodes as the generated type and as the shared
/// shape, and what the generated type encodes (any server that keeps the contract) decodes as the
/// shared shape.
@Suite("The shared sync codec speaks openapi.yaml's shapes")
struct SyncWireContractTests {
    let store: LocalStore
    let mirror = TableMirror(SyncCollections.pantryItems, table: "items")

    init() throws {
        store = try LocalStore(writer: DatabaseQueue(), migrations: [itemsMigration])
    }

    /// Text at the edges of JSON escaping: quotes, backslashes, a tab and line breaks, the highest
    /// control character a description may hold, non-Latin scripts, an emoji, a lone `/`.
    static let awkward = ["say \"cheese\"", #"C:\pantry\"#, "tab\there\nand\r\nlines", "Ünïcödé ✓ 日本語 🥫", "a/b", ""]

    /// More of it, for what the server writes: every other control character, DEL, a line
    /// separator, a combining accent, a right-to-left script.
    static let nastier = awkward + ["\u{0}\u{1}\u{8}\u{c}\u{1b}\u{1f}", "del\u{7f}", "line\u{2028}sep", "e\u{301}", "שלום"]

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
        #expect(page.spaces?[1].members == [SpaceMember(username: "bob", role: .owner, since: Date(timeIntervalSince1970: 1_700_000_000))])
        #expect(page.removed?.map(\.id) == ["old"])
    }

    // MARK: - What the server writes, read by the generated types and by the shared shapes

    /// Records with every kind of value at its edges: big counters, nulls, deletions, no space's
    /// changer, text that needs escaping in names, values and ids.
    static var records: [SyncWire.PulledRecord] {
        nastier.enumerated().map { index, text in
            SyncWire.PulledRecord(
                collection: "pantry_items", recordId: "r\(index) \(text)",
                fields: ["name": .string(text), text.isEmpty ? "empty" : text: .integer(Int64(index)), "big": .integer(Int64.max - Int64(index)),
                         "low": .integer(Int64.min + Int64(index)), "share": .number(Double(index) / 7), "tiny": .number(1e-300),
                         "whole": .number(1e15), "gone": .null, "kept": .boolean(index.isMultiple(of: 2))],
                deleted: index % 3 == 1, hlc: "1700000000000-0000\(index % 10)-node \(text)",
                space: index.isMultiple(of: 2) ? "home \(text)" : "me", changedBy: index % 3 == 0 ? nil : "ann \(text)")
        }
    }

    static let members = [
        SpaceMember(username: "bob \"b\"", role: .owner, since: UnixMillis.date(milliseconds: 1_700_000_000_123)),
        SpaceMember(username: "ann 日本", role: .editor, since: UnixMillis.date(milliseconds: 0)),
        SpaceMember(username: "cy\\", role: .viewer, since: UnixMillis.date(milliseconds: -86_400_001)),
        SpaceMember(username: "dee 🥫", role: .viewer, since: UnixMillis.date(milliseconds: 253_402_300_799_999)),
    ]

    @Test func aPageTheServerWritesReadsAsTheContractAndAsTheSharedPage() throws {
        let page = SyncWire.PulledPage(
            changes: Self.records, cursor: "s1.me:7,home:\u{1}9\"", hasMore: false,
            spaces: [SpaceSummary(id: "me", name: "Personal", kind: .personal, role: .owner),
                     SpaceSummary(id: "home \"1\"", name: "Home\n\"1\" 🏠", kind: .shared, role: .editor, app: "pantry").with(members: Self.members),
                     SpaceSummary(id: "flat", name: "", kind: .shared, role: .viewer, app: nil, owner: nil, members: [])],
            removed: [SpaceRef(id: "old \\", name: "Old \"flat\"\t"), SpaceRef(id: "", name: "")], remaining: 9_007_199_254_740_991)

        let (contract, shared) = try Self.serverWrites(try Components.Schemas.SyncPullResponse(page), readAs: SyncWire.PulledPage.self)

        #expect(contract.cursor == page.cursor && !contract.hasMore && contract.remaining == page.remaining)
        #expect(contract.changes.count == page.changes.count)
        for (record, written) in zip(page.changes, contract.changes) { Self.expectSame(record, written) }
        #expect(contract.spaces.map(SpaceSummary.init) == page.spaces)
        #expect(contract.removed.map { SpaceRef(id: $0.id, name: $0.name) } == page.removed)

        #expect(shared.cursor == page.cursor && shared.hasMore == page.hasMore && shared.remaining == page.remaining)
        #expect(shared.personalSpace == "me")
        for (record, read) in zip(page.changes, shared.changes) { Self.expectSame(record, read) }
        #expect(shared.changes.count == page.changes.count)
        #expect(shared.spaces == page.spaces && shared.removed == page.removed)
        #expect(shared.spaces?[1].owner == "bob \"b\"" && shared.spaces?[1].members?.first?.since == Self.members[0].since)
    }

    @Test func aRecordListTheServerWritesReadsAsTheContractAndAsTheSharedList() throws {
        let list = SyncWire.RecordList(records: Self.records)
        let (contract, shared) = try Self.serverWrites(try Components.Schemas.SyncRecordList(list), readAs: SyncWire.RecordList.self)
        #expect(contract.records.count == list.records.count && shared.records.count == list.records.count)
        for (record, written) in zip(list.records, contract.records) { Self.expectSame(record, written) }
        for (record, read) in zip(list.records, shared.records) { Self.expectSame(record, read) }
    }

    @Test func aPushAnswerTheServerWritesReadsAsTheContractAndAsTheSharedAnswer() throws {
        let answer = SyncWire.PushAnswer(results: Self.nastier.enumerated().map { index, text in
            switch index % 4 {
            case 0: SyncWire.PushResult(id: "c\(index) \(text)", status: .applied)
            case 1: SyncWire.PushResult(id: "c\(index)", status: .duplicate)
            case 2: SyncWire.PushResult(id: "c\(index)", status: .rejected, message: "no: \(text)")
            default: SyncWire.PushResult(id: "c\(index)", status: .rejected, message: text, code: "below_minimum \(text)", field: text,
                                         current: index.isMultiple(of: 3) ? nil : Self.records[index])
            }
        })
        let (contract, shared) = try Self.serverWrites(try Components.Schemas.SyncPushResponse(answer), readAs: SyncWire.PushAnswer.self)

        #expect(contract.results.map(\.id) == answer.results.map(\.id))
        #expect(contract.results.map(\.status.rawValue) == answer.results.map(\.status.rawValue))
        #expect(contract.results.map(\.message) == answer.results.map(\.message))
        #expect(contract.results.map(\.code) == answer.results.map(\.code) && contract.results.map(\.field) == answer.results.map(\.field))
        for (result, written) in zip(answer.results, contract.results) {
            #expect((result.current == nil) == (written.current == nil))
            if let record = result.current, let written = written.current { Self.expectSame(record, written) }
        }
        #expect(shared.results.map(\.id) == answer.results.map(\.id) && shared.results.map(\.status) == answer.results.map(\.status))
        #expect(shared.results.map(\.message) == answer.results.map(\.message))
        #expect(shared.results.map(\.code) == answer.results.map(\.code) && shared.results.map(\.field) == answer.results.map(\.field))
        for (result, read) in zip(answer.results, shared.results) {
            #expect((result.current == nil) == (read.current == nil))
            if let record = result.current, let read = read.current { Self.expectSame(record, read) }
        }
    }

    @Test func aSpaceAndItsMembersTheServerWritesReadAsTheContractAndBack() throws {
        for (index, text) in Self.nastier.enumerated() {
            let space = SpaceDetails(id: "s\(index) \(text)", name: "Home \(text)", kind: index == 0 ? .personal : .shared,
                                     role: SpaceRole.allCases[index % 3], owner: "bob \(text)", members: Self.members,
                                     app: index.isMultiple(of: 2) ? nil : "pantry")
            let written = try Self.encoded(Components.Schemas.Space(space))
            let contract = try JSONDecoder.contract.decode(Components.Schemas.Space.self, from: written)
            #expect(SpaceDetails(contract) == space, "\(text)")
        }
    }

    @Test func invitationsTheServerWritesReadAsTheContractAndBack() throws {
        let invitations = SpaceInvitations(waiting: Self.nastier.enumerated().map { index, text in
            SpaceInvitation(id: "i\(index) \(text)", spaceID: "s \(text)", spaceName: text, invitedBy: "ann \(text)",
                            role: index.isMultiple(of: 2) ? .editor : .viewer, createdAt: Self.members[index % 4].since)
        }, awaitingEmailVerification: true)
        let written = try Self.encoded(Components.Schemas.InvitationList(invitations))
        let contract = try JSONDecoder.contract.decode(Components.Schemas.InvitationList.self, from: written)
        #expect(SpaceInvitations(contract) == invitations)
        #expect(SpaceInvitations(try JSONDecoder.contract.decode(Components.Schemas.InvitationList.self,
                                                                 from: try Self.encoded(Components.Schemas.InvitationList(
                                                                     SpaceInvitations(waiting: [], awaitingEmailVerification: false)))))
            == SpaceInvitations(waiting: [], awaitingEmailVerification: false))
    }

    // MARK: - What any server that keeps the contract writes, read by the shared shapes

    @Test func aContractRecordListAndPushAnswerReadIntoTheSharedShapes() throws {
        let contractRecords = try Self.records.map(Components.Schemas.SyncRecord.init)
        let list = try JSONDecoder().decode(SyncWire.RecordList.self,
                                            from: try Self.encoded(Components.Schemas.SyncRecordList(records: contractRecords)))
        for (written, read) in zip(contractRecords, list.records) { Self.expectSame(read, written) }

        let results: [Components.Schemas.SyncResult] = [
            .init(id: "a \"1\"", status: .applied), .init(id: "d", status: .duplicate, message: "seen"),
            .init(id: "r", status: .rejected, message: "tab\there", code: "out_of_range", field: "quantity 日本", current: contractRecords[1]),
            .init(id: "x", status: .rejected, message: "no record", code: "deleted", field: nil, current: nil),
        ]
        let answer = try JSONDecoder().decode(SyncWire.PushAnswer.self, from: try Self.encoded(Components.Schemas.SyncPushResponse(results: results)))
        #expect(answer.results.map(\.id) == results.map(\.id) && answer.results.map(\.status.rawValue) == results.map(\.status.rawValue))
        #expect(answer.results.map(\.message) == results.map(\.message) && answer.results.map(\.code) == results.map(\.code))
        #expect(answer.results.map(\.field) == results.map(\.field))
        Self.expectSame(try #require(answer.results[2].current), contractRecords[1])
        #expect(answer.results[3].current == nil)
    }

    @Test func aContractPageWithNullsAndNoExtrasReadsIntoTheSharedPage() throws {
        // NB: what the generated types leave out (absent optionals) and what JSON may spell null.
        let body = #"""
            {"changes":[{"collection":"c","recordId":"r","fields":{"a":null,"b":9223372036854775807,"c":-0.0,"d":"\u0000\ud83e\udd6b"},
                         "deleted":true,"hlc":"h","space":"me","changedBy":null}],
             "cursor":"s1","hasMore":true,"spaces":[{"id":"me","name":"P","kind":"personal","role":"owner","app":null},
                                                   {"id":"h","name":"H","kind":"later","role":"admin","owner":"o",
                                                    "members":[{"username":"o","role":"boss","since":"2023-11-14T22:13:20Z"},
                                                               {"username":"p","role":"editor","since":"not a date"}]}],
             "removed":[],"remaining":null}
            """#
        let page = try JSONDecoder().decode(SyncWire.PulledPage.self, from: Data(body.utf8))
        #expect(page.changes[0].fields == ["a": .null, "b": .integer(Int64.max), "c": .number(-0.0), "d": .string("\u{0}🥫")]
            || Self.same(page.changes[0].fields, ["a": .null, "b": .integer(Int64.max), "c": .integer(0), "d": .string("\u{0}🥫")]))
        #expect(page.changes[0].deleted && page.changes[0].changedBy == nil && page.remaining == nil)
        #expect(page.spaces?[0].app == nil && page.spaces?[0].members == nil && page.spaces?[0].owner == nil)
        // A kind, a role this version does not know: shared, viewer; a date it cannot read: 1970.
        #expect(page.spaces?[1].kind == .shared && page.spaces?[1].role == .viewer)
        #expect(page.spaces?[1].members == [SpaceMember(username: "o", role: .viewer, since: Date(timeIntervalSince1970: 1_700_000_000)),
                                            SpaceMember(username: "p", role: .editor, since: Date(timeIntervalSince1970: 0))])
    }

    // MARK: - Helpers

    /// Encodes `value` as the server's generated server does, and reads it back as the generated
    /// type and as `Shared`.
    static func serverWrites<Contract: Codable, Shared: Decodable>(_ value: Contract, readAs: Shared.Type) throws -> (Contract, Shared) {
        let body = try encoded(value)
        return (try JSONDecoder.contract.decode(Contract.self, from: body), try JSONDecoder().decode(Shared.self, from: body))
    }

    /// JSON as the server's generated server writes it: dates by `MillisecondDateTranscoder`, no other option.
    static func encoded(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(try MillisecondDateTranscoder().encode(date))
        }
        return try encoder.encode(value)
    }

    static func expectSame(_ record: SyncWire.PulledRecord, _ other: SyncWire.PulledRecord, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(record.collection == other.collection && record.recordId == other.recordId && record.hlc == other.hlc,
                sourceLocation: sourceLocation)
        #expect(record.deleted == other.deleted && record.space == other.space && record.changedBy == other.changedBy,
                sourceLocation: sourceLocation)
        #expect(same(record.fields, other.fields), "\(record.recordId): \(record.fields) against \(other.fields)", sourceLocation: sourceLocation)
    }

    static func expectSame(_ record: SyncWire.PulledRecord, _ written: Components.Schemas.SyncRecord,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(record.collection == written.collection && record.recordId == written.recordId && record.hlc == written.hlc,
                sourceLocation: sourceLocation)
        #expect(record.deleted == written.deleted && record.space == written.space && record.changedBy == written.changedBy,
                sourceLocation: sourceLocation)
        let fields = written.fields.additionalProperties.value.mapValues { SyncValue(any: $0) }
        #expect(same(record.fields, fields), "\(record.recordId): \(record.fields) against \(fields)", sourceLocation: sourceLocation)
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

extension JSONDecoder {
    /// JSON as the generated types read it: dates by `MillisecondDateTranscoder`.
    static var contract: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try MillisecondDateTranscoder().decode(try decoder.singleValueContainer().decode(String.self))
        }
        return decoder
    }
}
