import EventualAPI
import GRDB

/// A record type of a synced collection, read and written as a value: its stored properties,
/// under their coding keys, are the collection's fields, plus `id` and, for a collection in
/// spaces, the row's `space_id` and `changed_by` (which the engine writes, never the app).
///
/// A row decodes into it by its coding keys (`FetchableRecord`'s `Decodable` support), and a
/// change is what the value's encoding says (`SyncFieldsEncoder`), so no app writes a field's
/// name by hand: see `RecordTable`.
public protocol SyncRecord: Codable, Sendable, FetchableRecord {
    /// The collection it is a record of (declared in EventualAPI, where the server reads it).
    static var collection: SyncCollection { get }
    var id: String { get }
}

extension SyncRecord {
    /// The record's synced fields, every one of its collection's (a nil one as null).
    func syncFields() throws -> [String: SyncValue] {
        let encoded = try SyncFieldsEncoder().fields(of: self)
        var fields: [String: SyncValue] = [:]
        for name in Self.collection.fields.keys { fields[name] = encoded[name] ?? .null }
        return fields
    }
}
