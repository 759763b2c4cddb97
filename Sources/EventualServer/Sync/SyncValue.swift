import Foundation

/// One field value of a synced record, as validated against its collection and stored.
enum SyncValue: Sendable, Equatable, Codable {
    case string(String)
    case integer(Int)
    case number(Double)
    case boolean(Bool)
    case null

    /// The value as the generated OpenAPI containers hold it.
    var jsonValue: (any Sendable)? {
        switch self {
        case .string(let text): return text
        case .integer(let number): return number
        case .number(let number): return number
        case .boolean(let flag): return flag
        case .null: return nil
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .boolean(flag)
        } else if let number = try? container.decode(Int.self) {
            self = .integer(number)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .integer(let number): try container.encode(number)
        case .number(let number): try container.encode(number)
        case .boolean(let flag): try container.encode(flag)
        case .null: try container.encodeNil()
        }
    }
}
