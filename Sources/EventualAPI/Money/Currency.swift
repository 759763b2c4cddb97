import Foundation

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

    /// Whether `code` (upper case) is a currency in use: the table of digits above, or the
    /// system's list of current ISO 4217 codes (which leaves out XXX, test codes and metals).
    public static func isKnown(_ code: String) -> Bool {
        isCode(code) && (minorDigits[code] != nil || inUse.contains(code))
    }

    private static let inUse = Set(Locale.commonISOCurrencyCodes)
}
