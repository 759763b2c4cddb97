/// A record's fields as a change carries them: each stored property under its coding key, as a
/// `SyncValue` (text, whole number, number, flag or null). A property that encodes as one value
/// (an enum with a raw value, a day as `YYYY-MM-DD`) is that value; one that encodes as a list or
/// an object is refused, since a field holds one value.
public struct SyncFieldsEncoder {
    public init() {}

    /// The fields of `record`; those it leaves out (a nil optional, by `encodeIfPresent`) are absent.
    public func fields(of record: some Encodable) throws -> [String: SyncValue] {
        let fields = Fields()
        try record.encode(to: RecordEncoder(fields: fields))
        if let problem = fields.problem { throw problem }
        return fields.values
    }

    /// Why a record cannot be spelled as fields.
    public struct Unsupported: Error, CustomStringConvertible {
        public let field: String
        public var description: String { "The field '\(field)' is a list or an object: a synced field holds one text, number, flag or null" }
    }

    /// What the record's encoding wrote; a list or an object is remembered as the problem.
    private final class Fields {
        var values: [String: SyncValue] = [:]
        var problem: Unsupported?
    }

    private struct RecordEncoder: Encoder {
        let fields: Fields
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Keyed<Key>(fields: fields))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            fields.problem = Unsupported(field: "")
            return Ignored(fields: fields)
        }
        func singleValueContainer() -> any SingleValueEncodingContainer {
            fields.problem = Unsupported(field: "")
            return Value(field: "", fields: fields)
        }
    }

    /// The record's keyed container: each key a field.
    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let fields: Fields
        var codingPath: [any CodingKey] { [] }

        func encodeNil(forKey key: Key) throws { fields.values[key.stringValue] = .null }
        func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let slot = Value(field: key.stringValue, fields: fields)
            try value.encode(to: slot)
            fields.values[key.stringValue] = slot.value ?? .null
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            fields.problem = Unsupported(field: key.stringValue)
            return KeyedEncodingContainer(Keyed<NestedKey>(fields: Fields()))
        }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            fields.problem = Unsupported(field: key.stringValue)
            return Ignored(fields: Fields())
        }
        func superEncoder() -> any Encoder { RecordEncoder(fields: fields) }
        func superEncoder(forKey key: Key) -> any Encoder {
            fields.problem = Unsupported(field: key.stringValue)
            return RecordEncoder(fields: Fields())
        }
    }

    /// One field's value, as its type encodes itself.
    private final class Value: Encoder, SingleValueEncodingContainer {
        let field: String
        let fields: Fields
        var value: SyncValue?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(field: String, fields: Fields) {
            self.field = field
            self.fields = fields
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            fields.problem = Unsupported(field: field)
            return KeyedEncodingContainer(Keyed<Key>(fields: Fields()))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            fields.problem = Unsupported(field: field)
            return Ignored(fields: Fields())
        }
        func singleValueContainer() -> any SingleValueEncodingContainer { self }

        func encodeNil() throws { value = .null }
        func encode(_ value: Bool) throws { self.value = .boolean(value) }
        func encode(_ value: String) throws { self.value = .string(value) }
        func encode(_ value: Double) throws { self.value = .number(value) }
        func encode(_ value: Float) throws { self.value = .number(Double(value)) }
        func encode(_ value: Int) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: Int8) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: Int16) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: Int32) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: Int64) throws { self.value = .integer(value) }
        func encode(_ value: UInt) throws { self.value = .integer(Int64(clamping: value)) }
        func encode(_ value: UInt8) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: UInt16) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: UInt32) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: UInt64) throws { self.value = .integer(Int64(clamping: value)) }
        func encode<T: Encodable>(_ value: T) throws { try value.encode(to: self) }
    }

    /// Where a list would go: nothing is kept (the problem is remembered already).
    private struct Ignored: UnkeyedEncodingContainer {
        let fields: Fields
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }
        func encodeNil() throws {}
        func encode<T: Encodable>(_ value: T) throws {}
        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(fields: Fields()))
        }
        func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
        func superEncoder() -> any Encoder { RecordEncoder(fields: Fields()) }
    }
}
