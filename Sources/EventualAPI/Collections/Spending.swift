import Foundation

/// SpendiQ's synced collections, and money as it crosses the wire.
extension SyncCollections {
    /// Where money is kept: a wallet, a bank account, a card, savings. Balances are computed
    /// from the opening balance and the transactions, never stored.
    public static let spendingAccounts = SyncCollection(name: "spending_accounts", fields: [
        "name": SyncField(.string, nullable: false, maxLength: 100),
        /// `cash`, `bank`, `card` or `savings`.
        "kind": SyncField(.string, nullable: false, maxLength: 16),
        /// ISO 4217 code, e.g. EUR.
        "currency": SyncField(.string, nullable: false, maxLength: 3),
        "colour": SyncField(.string, maxLength: 32),
        /// Minor units of the currency (cents for EUR).
        "openingBalanceMinor": SyncField(.integer, nullable: false),
        "archived": SyncField(.boolean, nullable: false),
        /// Unix milliseconds.
        "createdAt": SyncField(.integer, nullable: false),
    ])

    /// Money spent, received or moved between two accounts.
    public static let spendingTransactions = SyncCollection(name: "spending_transactions", fields: [
        "accountId": SyncField(.string, nullable: false, maxLength: 128),
        /// `expense`, `income` or `transfer`.
        "kind": SyncField(.string, nullable: false, maxLength: 16),
        /// Always above zero, in minor units of `currency`; the kind says which way it goes.
        "amountMinor": SyncField(.integer, nullable: false),
        "currency": SyncField(.string, nullable: false, maxLength: 3),
        "category": SyncField(.string, maxLength: 100),
        "note": SyncField(.string, maxLength: 500),
        /// Unix milliseconds of the moment the money moved.
        "occurredAt": SyncField(.integer, nullable: false),
        "place": SyncField(.string, maxLength: 200),
        "latitude": SyncField(.number),
        "longitude": SyncField(.number),
        /// Imported from a bank's export rather than typed.
        "automatic": SyncField(.boolean, nullable: false),
        /// For a transfer: the account the money went to.
        "toAccountId": SyncField(.string, maxLength: 128),
    ])

    /// A person's budgets: at most `amountMinor` of `currency` per period, on one category or on
    /// everything. One record per period, category and currency (its id is made from them, so
    /// two devices that set the same budget offline set one record).
    public static let spendingLimits = SyncCollection(name: "spending_limits", fields: [
        /// `daily`, `weekly` or `monthly`.
        "period": SyncField(.string, nullable: false, maxLength: 16),
        /// Empty for every category.
        "category": SyncField(.string, nullable: false, maxLength: 100),
        "currency": SyncField(.string, nullable: false, maxLength: 3),
        /// Minor units of `currency`, above zero.
        "amountMinor": SyncField(.integer, nullable: false),
    ])

    /// Every collection of SpendiQ.
    public static let spending = [spendingAccounts, spendingTransactions, spendingLimits]
}

/// An amount of money: an integer number of minor units of an ISO 4217 currency. Never a
/// floating-point number, so that sums are exact.
public struct Money: Sendable, Hashable, Codable, CustomStringConvertible {
    public let minorUnits: Int64
    /// The ISO 4217 code, upper case.
    public let currency: String

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

/// ISO 4217 currencies: their codes and how many digits follow the decimal point.
public enum Currency {
    /// Minor-unit digits of the common currencies (ISO 4217). A currency not listed has 2.
    public static let minorDigits: [String: Int] = [
        "EUR": 2, "USD": 2, "GBP": 2, "CHF": 2, "CAD": 2, "AUD": 2, "NZD": 2, "SEK": 2, "NOK": 2, "DKK": 2,
        "PLN": 2, "CZK": 2, "HUF": 2, "RON": 2, "BGN": 2, "TRY": 2, "RUB": 2, "UAH": 2, "ILS": 2, "ZAR": 2,
        "MXN": 2, "BRL": 2, "ARS": 2, "COP": 2, "PEN": 2, "UYU": 2, "BOB": 2, "CNY": 2, "HKD": 2, "SGD": 2,
        "INR": 2, "IDR": 2, "MYR": 2, "PHP": 2, "THB": 2, "TWD": 2, "MAD": 2, "EGP": 2, "NGN": 2, "KES": 2,
        "JPY": 0, "KRW": 0, "CLP": 0, "ISK": 0, "VND": 0, "PYG": 0, "UGX": 0, "XOF": 0, "XAF": 0, "XPF": 0,
        "BHD": 3, "KWD": 3, "OMR": 3, "JOD": 3, "TND": 3, "LYD": 3, "IQD": 3,
    ]

    /// The digits after the decimal point of `code`.
    public static func digits(_ code: String) -> Int { minorDigits[code] ?? 2 }

    /// Whether `code` has the form of an ISO 4217 code: three ASCII capital letters.
    public static func isCode(_ code: String) -> Bool {
        code.utf8.count == 3 && code.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}

/// Distances on the Earth, for offers near a person: the server filters with it, the device
/// computes the distance it shows with it.
public enum Geo {
    /// The mean radius of the Earth in metres.
    public static let earthRadius = 6_371_008.8

    /// The great-circle (haversine) distance in metres between two points given in degrees.
    public static func distanceMeters(_ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (latitude2 - latitude1) * radians, dLon = (longitude2 - longitude1) * radians
        let a = sin(dLat / 2) * sin(dLat / 2)
            + cos(latitude1 * radians) * cos(latitude2 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }
}
