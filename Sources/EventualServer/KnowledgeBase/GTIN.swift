/// A GS1 trade item number read from a barcode: EAN-8, UPC-A (12 digits), EAN-13 or GTIN-14,
/// with its check digit verified. Stored normalised to 14 digits, so that a UPC-A code and the
/// same code as EAN-13 (with a leading 0) name one product.
struct GTIN: Hashable, Sendable, CustomStringConvertible {
    /// The 14-digit form.
    let normalized: String

    static let validLengths = [8, 12, 13, 14]

    init(validating raw: String) throws(APIError) {
        guard !raw.isEmpty else { throw .badRequest("barcode is required") }
        let digits = Array(raw.utf8)
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw .badRequest("barcode must contain digits only")
        }
        guard Self.validLengths.contains(digits.count) else {
            throw .badRequest("barcode must have 8 (EAN-8), 12 (UPC-A), 13 (EAN-13) or 14 (GTIN-14) digits, not \(digits.count)")
        }
        let values = digits.map { Int($0 - UInt8(ascii: "0")) }
        let expected = Self.checkDigit(for: values.dropLast())
        guard values.last == expected else {
            throw .badRequest("barcode check digit is wrong: \(raw.prefix(raw.count - 1)) must end in \(expected)")
        }
        normalized = String(repeating: "0", count: 14 - digits.count) + raw
    }

    /// The GS1 mod-10 check digit: weights 3 and 1 alternate from the rightmost data digit.
    static func checkDigit(for data: some BidirectionalCollection<Int>) -> Int {
        var sum = 0
        for (offset, digit) in data.reversed().enumerated() {
            sum += digit * (offset % 2 == 0 ? 3 : 1)
        }
        return (10 - sum % 10) % 10
    }

    var description: String { normalized }
}
