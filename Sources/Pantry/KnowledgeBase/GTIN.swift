/// A trade item number (EAN-8, UPC-A, EAN-13 or GTIN-14) as the knowledge base stores it: 14 digits.
public struct GTIN: Sendable, Hashable, CustomStringConvertible {
    /// The 14-digit form, zero-padded.
    public let digits: String

    /// Accepts 8, 12, 13 or 14 digits with a valid GS1 check digit; spaces and dashes are ignored.
    public init(_ text: String) throws(PantryError) {
        let cleaned = text.filter { $0 != " " && $0 != "-" }
        guard [8, 12, 13, 14].contains(cleaned.count), cleaned.allSatisfy(\.isASCII), cleaned.allSatisfy(\.isNumber) else {
            throw .invalidBarcode(text)
        }
        let padded = String(repeating: "0", count: 14 - cleaned.count) + cleaned
        guard Self.checkDigitIsValid(padded) else { throw .invalidBarcode(text) }
        digits = padded
    }

    /// The shortest usual form: 13 digits for EAN-13/UPC-A, 8 for EAN-8, else 14.
    public var description: String {
        if digits.hasPrefix("000000") { return String(digits.dropFirst(6)) }
        if digits.hasPrefix("0") { return String(digits.dropFirst()) }
        return digits
    }

    static func checkDigitIsValid(_ fourteen: String) -> Bool {
        let values = fourteen.compactMap(\.wholeNumberValue)
        // NB: GS1 weights alternate 3,1 from the digit left of the check digit, right to left.
        let sum = values.dropLast().reversed().enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 3 : 1) }
        return (10 - sum % 10) % 10 == values.last
    }
}
