import EventualAPI
import GRDB

/// A record type of a synced collection, read and written as a value: its stored properties,
/// under their coding keys, are the collection's fields, plus `id` and, for a collection in
/// spaces, the row's `space_id` and `changed_by` (which the engine writes, never the app).
///
/// A row decodes into it by its coding keys (`FetchableRecord`'s `Decodable` support), and a
/// change is what the value's encoding says (`SyncFieldsEncoder`), so no app writes a field's
/// name by hand: see `RecordTable`. Its `CodingKeys` are declared (and `CaseIterable`) so that
/// they can be held against the collection: `checkShape(table:_:)`, which a table runs at its first use.
public protocol SyncRecord: Codable, Sendable, FetchableRecord {
    /// The keys its properties are coded under: each a field of `collection` or a column the row has besides.
    associatedtype CodingKeys: CodingKey & CaseIterable & Hashable
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

extension SyncRecord {
    /// Fields of this record type named by its coding keys, as a settle's edits take them
    /// (`SettleChoice.keepMine(edits:)`): these are set even where the row holds the value already
    /// (a counter set is no longer added to), so they are given, not diffed.
    public static func fields(_ values: [CodingKeys: SyncValue]) -> [String: SyncValue] {
        Dictionary(uniqueKeysWithValues: values.map { ($0.key.stringValue, $0.value) })
    }
}

extension Dictionary where Key == String {
    /// The value of a field named by a record's coding key: what a refused change set
    /// (`change.fields[field: SpendingTransaction.CodingKeys.kind]`), or a server's record holds.
    public subscript<Field: CodingKey>(field field: Field) -> Value? { self[field.stringValue] }
}
