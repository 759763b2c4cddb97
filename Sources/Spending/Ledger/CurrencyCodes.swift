import EventualAPI
import Foundation

/// The currencies an account or a budget may hold: ISO 4217 codes in use, never a made-up one.
enum CurrencyCodes {
    /// Whether `code` (upper case) is a currency in use: the app's table of decimals, or the
    /// system's list of current ISO 4217 codes (which leaves out XXX, test codes and metals).
    static func isKnown(_ code: String) -> Bool {
        Currency.isCode(code) && (Currency.minorDigits[code] != nil || common.contains(code))
    }

    private static let common = Set(Locale.commonISOCurrencyCodes)
}
