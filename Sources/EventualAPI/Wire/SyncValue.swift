import Foundation

/// A value of a synced field, as JSON carries it: the one wire value type that the server, the
/// engine, the apps and the tests share.
public enum SyncValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case number(Double)
    case boolean(Bool)
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .boolean(flag)
        } else if let whole = try? container.decode(Int64.self) {
            self = .integer(whole)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .integer(let whole): try container.encode(whole)
        case .number(let number): try container.encode(number)
        case .boolean(let flag): try container.encode(flag)
        case .null: try container.encodeNil()
        }
    }

    /// From a value of the generated code's JSON containers (`OpenAPIValueContainer.value`).
    public init(any value: (any Sendable)?) {
        switch value {
        case nil: self = .null
        case let flag as Bool: self = .boolean(flag)
        case let whole as Int: self = .integer(Int64(whole))
        case let whole as Int64: self = .integer(whole)
        case let number as Double: self = Int64(exactly: number).map(SyncValue.integer) ?? .number(number)
        case let text as String: self = .string(text)
        case let other?: self = .string(String(describing: other))
        }
    }

    /// The value for the generated code's JSON containers (`OpenAPIObjectContainer(unvalidatedValue:)`).
    public var anyValue: (any Sendable)? {
        switch self {
        case .string(let text): return text
        case .integer(let whole): return Int(whole)
        case .number(let number): return number
        case .boolean(let flag): return flag
        case .null: return nil
        }
    }

    public var stringValue: String? { if case .string(let text) = self { return text } else { return nil } }
    public var int64Value: Int64? {
        switch self {
        case .integer(let whole): return whole
        case .number(let number): return Int64(exactly: number)
        default: return nil
        }
    }
    /// The largest magnitude of a number a record holds: 2^53 - 1, the largest whole number a
    /// Double (and so JSON as most parsers read it) holds exactly. The contract states it too.
    public static let largestMagnitude: Int64 = 9_007_199_254_740_991

    /// Whether a record may hold `number`: finite, and no further from zero than `largestMagnitude`.
    public static func holdable(_ number: Double) -> Bool {
        number.isFinite && number.magnitude <= Double(largestMagnitude)
    }

    public var doubleValue: Double? {
        switch self {
        case .integer(let whole): return Double(whole)
        case .number(let number): return number
        default: return nil
        }
    }
    public var boolValue: Bool? { if case .boolean(let flag) = self { return flag } else { return nil } }
    public var isNull: Bool { self == .null }

    public var description: String {
        switch self {
        case .string(let text): return text
        case .integer(let whole): return String(whole)
        case .number(let number): return String(number)
        case .boolean(let flag): return String(flag)
        case .null: return "null"
        }
    }
}

extension SyncValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(nilLiteral: ()) { self = .null }
}

/// Optional values map to `null`.
extension SyncValue {
    public static func string(_ value: String?) -> SyncValue { value.map(SyncValue.string) ?? .null }
    public static func integer(_ value: Int64?) -> SyncValue { value.map(SyncValue.integer) ?? .null }
    public static func number(_ value: Double?) -> SyncValue { value.map(SyncValue.number) ?? .null }
}
