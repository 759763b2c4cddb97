import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// An operator's fix of one synced record (a wrong price, a spam item), written through the sync
/// path as a push is: merged by stamps, with a new seq in its space and a commit in the history,
/// so that every device of every member hears of it at its next pull. NB: SQL written around it
/// changes no seq: no device would ever hear of it.
///
/// The change is filed as the space owner's (the person whose data it is), stamped by the
/// server's clock with the node `operator`.
public struct OperatorRecords: Sendable {
    private let sync: SyncStore
    private let validation: PushValidation
    private let database: Database

    /// Fixes records of the apps `catalog` serves (`DeployedApps.current`).
    public init(database: Database, catalog: AppCatalog = .builtIn) {
        self.database = database
        sync = SyncStore(database: database, catalog: catalog)
        validation = PushValidation(catalog: catalog, maxClockDrift: .seconds(60))
    }

    /// Why an operator's command cannot be done, in one line.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The record as a pull would send it, as JSON (one line), or a failure naming what is missing.
    public func show(space: String, collection: String, recordID: String) async throws -> String {
        let owner = try await owner(of: space)
        guard let record = try await sync.records([recordID], of: collection, in: space, for: owner).first else {
            throw Failure(description: "no \(collection) record \(recordID) in space \(space)")
        }
        return Self.json(record)
    }

    /// Sets fields of the record (`values` as typed: text, numbers, true or false, null) and returns it as JSON.
    public func set(space: String, collection: String, recordID: String, values: [String: String]) async throws -> String {
        guard let definition = validation.collections[collection] else { throw Failure(description: "no collection \(collection)") }
        var fields: [String: (any Sendable)?] = [:]
        for (name, text) in values {
            guard let field = definition.fields[name] else {
                throw Failure(description: "\(collection) has no field \(name) (its fields: \(definition.fields.keys.sorted().joined(separator: ", ")))")
            }
            fields[name] = try Self.value(text, as: field, named: name)
        }
        _ = try await show(space: space, collection: collection, recordID: recordID)
        try await write(space: space, collection: collection, recordID: recordID, fields: fields, deleted: false)
        return try await show(space: space, collection: collection, recordID: recordID)
    }

    /// Deletes the record on every device of the space's members.
    public func delete(space: String, collection: String, recordID: String) async throws {
        _ = try await show(space: space, collection: collection, recordID: recordID)
        try await write(space: space, collection: collection, recordID: recordID, fields: [:], deleted: true)
    }

    private func write(space: String, collection: String, recordID: String, fields: [String: (any Sendable)?], deleted: Bool) async throws {
        let owner = try await owner(of: space), now = UnixMillis.now()
        let stamp = HLCStamp(millis: now, counter: 0, node: "operator").description
        let change = Result { () throws(SyncRejection) in
            try validation.validate(collection: collection, recordID: recordID, hlc: stamp, fields: fields, deleted: deleted, now: now)
        }
        let outcomes = try await sync.push([SyncSubmission(id: UUID().uuidString.lowercased(), space: space, change: change)],
                                           userID: owner, now: now)
        switch outcomes.first {
        case .applied, .duplicate: return
        case .rejected(let message): throw Failure(description: "refused: \(message)")
        case .refused(let violation, _): throw Failure(description: "refused: \(violation.message)")
        case nil: throw Failure(description: "the server answered nothing")
        }
    }

    private func owner(of space: String) async throws -> String {
        let owner = try await database.withConnection { sql in
            try await sql.select().column("owner_id").from("spaces").where("id", .equal, space).first()?
                .decode(column: "owner_id", as: String.self)
        }
        guard let owner else { throw Failure(description: "no space \(space) (a person's own space has their user id)") }
        return owner
    }

    /// A value typed on a command line, as the wire would carry it for `field`.
    private static func value(_ text: String, as field: SyncField, named name: String) throws -> (any Sendable)? {
        if text == "null" { return nil }
        // NB: the checks a push's text gets before its merge (`SyncChangeLimits`): none of it reaches a record here either.
        if let problem = SyncChangeLimits.problem(withText: text) ?? SyncChangeLimits.problem(withText: text, of: field) {
            throw Failure(description: "\(name) \(problem)")
        }
        switch field.type {
        case .string, .date: return text
        case .boolean:
            guard let flag = Bool(text) else { throw Failure(description: "\(name) takes true or false, not \(text)") }
            return flag
        case .integer:
            guard let whole = Int(text) else { throw Failure(description: "\(name) takes a whole number, not \(text)") }
            return whole
        case .number, .counter:
            guard let number = Double(text), number.isFinite else { throw Failure(description: "\(name) takes a number, not \(text)") }
            return number
        }
    }

    private static func json(_ record: SyncedRecord) -> String {
        var out = "{"
        out += #""collection":"#; WireJSON.appendString(record.collection, to: &out)
        out += #","recordId":"#; WireJSON.appendString(record.recordID, to: &out)
        out += #","space":"#; WireJSON.appendString(record.space, to: &out)
        out += #","deleted":\#(record.isDeleted)"#
        out += #","seq":\#(record.seq)"#
        out += #","changedBy":"#
        if let by = record.changedBy { WireJSON.appendString(by, to: &out) } else { out += "null" }
        out += #","fields":"# + WireJSON.object(record.fields)
        return out + "}"
    }
}
