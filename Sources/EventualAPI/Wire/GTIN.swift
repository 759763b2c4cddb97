/// A GS1 trade item number read from a barcode: EAN-8, UPC-A (12 digits), EAN-13 or GTIN-14,
/// with its check digit verified. Kept as 14 digits, so that a UPC-A code and the same code as
/// EAN-13 (with a leading 0) name one product. The server, the engine and the apps share it.
public struct GTIN: Hashable, Sendable, CustomStringConvertible {
    /// The 14-digit form, zero-padded: what the knowledge base stores.
    public let normalized: String

    public static let validLengths = [8, 12, 13, 14]

    /// Exactly 8, 12, 13 or 14 ASCII digits with a valid check digit.
    public init(_ raw: String) throws(GTINError) {
        guard !raw.isEmpty else { throw .empty }
        let digits = Array(raw.utf8)
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { throw .notDigits }
        guard Self.validLengths.contains(digits.count) else { throw .wrongLength(digits.count) }
        let values = digits.map { Int($0 - UInt8(ascii: "0")) }
        let expected = Self.checkDigit(for: values.dropLast())
        guard values.last == expected else { throw .wrongCheckDigit(body: String(raw.dropLast()), expected: expected) }
        normalized = String(repeating: "0", count: 14 - digits.count) + raw
    }

    /// As a person types or reads it: spaces and dashes between the digits are ignored.
    public init(typed text: String) throws(GTINError) {
        try self.init(text.filter { $0 != " " && $0 != "-" })
    }

    /// The GS1 mod-10 check digit: weights 3 and 1 alternate from the rightmost data digit.
    public static func checkDigit(for data: some BidirectionalCollection<Int>) -> Int {
        var sum = 0
        for (offset, digit) in data.reversed().enumerated() {
            sum += digit * (offset % 2 == 0 ? 3 : 1)
        }
        return (10 - sum % 10) % 10
    }

    /// The shortest usual form, for people: 8 digits for EAN-8, 13 for EAN-13 and UPC-A, else 14.
    public var shortForm: String {
        if normalized.hasPrefix("000000") { return String(normalized.dropFirst(6)) }
        if normalized.hasPrefix("0") { return String(normalized.dropFirst()) }
        return normalized
    }

    public var description: String { normalized }
}

/// Why a text is not a GTIN, in words a person (or an API client) can act on.
public enum GTINError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case notDigits
    case wrongLength(Int)
    case wrongCheckDigit(body: String, expected: Int)

    public var description: String {
        switch self {
        case .empty: return "barcode is required"
        case .notDigits: return "barcode must contain digits only"
        case .wrongLength(let count):
            return "barcode must have 8 (EAN-8), 12 (UPC-A), 13 (EAN-13) or 14 (GTIN-14) digits, not \(count)"
        case .wrongCheckDigit(let body, let expected): return "barcode check digit is wrong: \(body.prefix(40)) must end in \(expected)"
        }
    }
}
