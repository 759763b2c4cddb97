/// A `--json` key that is always there: an optional written as `null` when empty, where
/// `Encodable`'s synthesised code would leave the key out.
///
///     struct Shape: Encodable { @JSONNullable var lastSyncAt: String? }
@propertyWrapper
public struct JSONNullable<Value> {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }
}

extension JSONNullable: Encodable where Value: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension JSONNullable: Decodable where Value: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }
}

extension KeyedDecodingContainer {
    /// A key that is absent reads as nil, as for a plain optional.
    public func decode<Value: Decodable>(_ type: JSONNullable<Value>.Type, forKey key: Key) throws -> JSONNullable<Value> {
        try decodeIfPresent(type, forKey: key) ?? JSONNullable(wrappedValue: nil)
    }
}

extension JSONNullable: Equatable where Value: Equatable {}
extension JSONNullable: Sendable where Value: Sendable {}
