/// An amount of money: an integer number of minor units of an ISO 4217 currency. Never a
/// floating-point number, so that sums are exact.
public struct Money: Sendable, Hashable, Codable, CustomStringConvertible {
    public let minorUnits: Int64
    /// The ISO 4217 code, upper case.
    public let currency: String

    /// The largest amount of one transaction, in minor units (EUR 100,000,000,000.00): beyond it a
    /// number is a typing mistake. NB: small enough that the sums of a lifetime of transactions
    /// (900,000 of the largest) fit in 64 bits, on a device and on the server.
    public static let largestMinorUnits: Int64 = 10_000_000_000_000

    public init(minorUnits: Int64, currency: String) {
        self.minorUnits = minorUnits
        self.currency = currency
    }

    /// "EUR 3.20", "JPY 1200", "BHD 1.250": the code, then the amount with the currency's digits.
    public var description: String { "\(currency) \(amountText)" }

    /// The amount alone, with the currency's digits and a leading minus when negative.
    public var amountText: String {
        let digits = Currency.digits(currency)
        let magnitude = minorUnits.magnitude
        let sign = minorUnits < 0 ? "-" : ""
        guard digits > 0 else { return sign + String(magnitude) }
        var scale: UInt64 = 1
        for _ in 0..<digits { scale *= 10 }
        let fraction = String(magnitude % scale)
        return sign + String(magnitude / scale) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
}
