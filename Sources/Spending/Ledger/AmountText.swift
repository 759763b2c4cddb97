import EventualAPI
import Foundation

/// Turns what a person (or a bank's export) wrote into minor units, without floating point, and
/// without guessing: an amount that reads two ways is refused with both readings.
public enum AmountText {
    /// The largest amount accepted, in minor units (`Money.largestMinorUnits`).
    public static let maxMinor = Money.largestMinorUnits

    /// The character between the units and the fraction of an amount.
    public enum DecimalSeparator: Character, Sendable, CaseIterable {
        case dot = ".", comma = ","

        /// "a decimal comma".
        public var name: String { self == .dot ? "a decimal point" : "a decimal comma" }
        var other: Character { self == .dot ? "," : "." }
    }

    /// An amount above zero: "12.50", "12,50", "1.234,56", "1 234,56", "1,234.56". A lone "." or
    /// "," followed by three digits ("1.234") reads two ways in a currency of two decimals and is
    /// refused with both readings.
    public static func parse(_ text: String, currency: String, decimal: DecimalSeparator? = nil) throws(SpendingError) -> Int64 {
        let value = try parseSigned(text, currency: currency, decimal: decimal)
        guard value > 0 else { throw value < 0 ? .negativeAmount(text.trimmingCharacters(in: .whitespaces)) : .invalidAmount(text) }
        return value
    }

    /// The symbols an amount may carry, and the currencies written with each.
    static let symbols: [Unicode.Scalar: Set<String>] = [
        "€": ["EUR"], "£": ["GBP", "EGP", "GIP", "FKP", "SHP", "SYP", "LBP", "SSP"], "¥": ["JPY", "CNY"],
        "$": ["USD", "CAD", "AUD", "NZD", "SGD", "HKD", "TWD", "MXN", "COP", "ARS", "CLP", "UYU", "BRL", "NAD", "FJD", "JMD", "TTD",
              "BSD", "BBD", "BZD", "BMD", "KYD", "XCD", "LRD", "SRD", "GYD", "SBD", "BND", "CUP", "DOP", "TOP", "WST", "NIO", "BOB"],
        "₹": ["INR"], "₩": ["KRW"], "₽": ["RUB"], "₺": ["TRY"], "₪": ["ILS"], "₱": ["PHP"], "฿": ["THB"], "₫": ["VND"], "₴": ["UAH"],
    ]

    /// Refuses an amount that names another currency than the account's, by symbol or code:
    /// "$5" in an account of euros is never recorded as EUR 5.00.
    private static func requireCurrency(_ text: String, _ currency: String) throws(SpendingError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.unicodeScalars.contains(where: { symbols[$0].map { !$0.contains(currency) } ?? false }) {
            throw .currencyMismatch(trimmed, currency: currency)
        }
        let letters = String(String.UnicodeScalarView(trimmed.unicodeScalars.filter { $0.properties.isAlphabetic })).uppercased()
        if letters != currency, Currency.isKnown(letters) { throw .currencyMismatch(trimmed, currency: currency) }
    }

    /// A signed amount (a bank's export: negative is money out). `decimal`, when known (a file's
    /// separator), settles what a lone separator means.
    public static func parseSigned(_ text: String, currency: String, decimal known: DecimalSeparator? = nil) throws(SpendingError) -> Int64 {
        try requireCurrency(text, currency)
        guard let number = Written(text, currency: currency) else { throw .invalidAmount(text) }
        let digits = Currency.digits(currency)
        let decimal: Character?
        switch number.reading(known) {
        case .integer: decimal = nil
        case .decimal(let separator): decimal = separator
        case .twoWays(let separator):
            // NB: "1.234" is 1.234 or 1234: it fits a currency of three decimals, else it is never guessed.
            guard digits < 3 else { decimal = separator; break }
            let (whole, fraction) = number.split(at: separator)
            let grouped = whole + fraction
            throw .ambiguousAmount(text, currency: currency, digits: digits,
                                   readings: [rounded(whole, fraction, digits: digits, separator: separator), grouped])
        }
        var whole = number.body, fraction = ""
        if let decimal {
            guard number.body.filter({ $0 == decimal }).count == 1 else { throw .invalidAmount(text) }
            (whole, fraction) = number.split(at: decimal)
        }
        // NB: thousands separators group by three ("12.5055" is a typing mistake, not 125,055).
        let groups = whole.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "." || $0 == "," })
        if groups.count > 1, groups.first!.isEmpty || groups.first!.count > 3 || groups.dropFirst().contains(where: { $0.count != 3 }) {
            throw .invalidAmount(text)
        }
        whole.removeAll { $0 == "." || $0 == "," }
        if whole.isEmpty { whole = "0" }
        guard fraction.allSatisfy(\.isNumber), whole.count <= 16, let units = Int64(whole) else { throw .invalidAmount(text) }
        guard fraction.count <= digits else { throw .tooManyDecimals(text, currency: currency, digits: digits, typed: fraction.count) }
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        let padded = fraction + String(repeating: "0", count: digits - fraction.count)
        let (product, overflow) = units.multipliedReportingOverflow(by: scale)
        guard !overflow, let minor = Int64(padded.isEmpty ? "0" : padded) else { throw .invalidAmount(text) }
        let total = product + minor
        guard total <= maxMinor else { throw .amountTooLarge(text.trimmingCharacters(in: .whitespaces), currency: currency) }
        return number.negative ? -total : total
    }

    /// The decimal separator a file's amounts agree on: nil when none of them tells (whole
    /// numbers, or only amounts like "1.234"). Throws when some say "." and others ",".
    public static func decimalSeparator(of texts: [String], currency: String) throws(SpendingError) -> DecimalSeparator? {
        var seen: [DecimalSeparator: String] = [:]
        for text in texts {
            guard let number = Written(text, currency: currency), case .decimal(let separator) = number.reading(nil),
                  let found = DecimalSeparator(rawValue: separator) else { continue }
            if seen[found] == nil { seen[found] = text }
        }
        if let dot = seen[.dot], let comma = seen[.comma] {
            throw .mixedDecimalSeparators(dot: dot, comma: comma)
        }
        return seen.keys.first
    }

    /// `whole.fraction` rounded half up to the currency's digits, written with `separator`.
    private static func rounded(_ whole: String, _ fraction: String, digits: Int, separator: Character) -> String {
        var units = Int64(whole.isEmpty ? "0" : whole) ?? 0
        var kept = Int64(fraction.prefix(digits)) ?? 0
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        if let next = fraction.dropFirst(digits).first, let value = next.wholeNumberValue, value >= 5 {
            kept += 1
            if kept == scale { kept = 0; units += 1 }
        }
        guard digits > 0 else { return String(units) }
        let text = String(kept)
        return String(units) + String(separator) + String(repeating: "0", count: digits - text.count) + text
    }

    /// An amount as written: its sign apart, its currency, spaces and symbols removed.
    private struct Written {
        enum Reading { case integer, decimal(Character), twoWays(Character) }

        let body: String
        let negative: Bool
        /// Spaces or apostrophes grouped its digits ("1 234,56"): then a lone separator is decimal.
        let spaced: Bool

        init?(_ text: String, currency: String) {
            var body = text.trimmingCharacters(in: .whitespaces)
            if body.uppercased().hasPrefix(currency) { body = String(body.dropFirst(currency.count)) }
            if body.uppercased().hasSuffix(currency) { body = String(body.dropLast(currency.count)) }
            body = body.trimmingCharacters(in: .whitespaces)
            var negative = false
            if body.hasPrefix("-") || body.hasPrefix("−") { negative = true; body.removeFirst() } else if body.hasPrefix("+") { body.removeFirst() }
            if body.hasPrefix("(") && body.hasSuffix(")") { negative = true; body = String(body.dropFirst().dropLast()) }
            let marks: Set<Unicode.Scalar> = [" ", "\u{A0}", "\u{202F}", "'"]
            let trimmed = String(String.UnicodeScalarView(body.unicodeScalars.filter { AmountText.symbols[$0] == nil }))
                .trimmingCharacters(in: .whitespaces)
            spaced = trimmed.unicodeScalars.contains { marks.contains($0) }
            body = String(String.UnicodeScalarView(trimmed.unicodeScalars.filter { !marks.contains($0) }))
            guard !body.isEmpty, body.contains(where: \.isNumber),
                  body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == ",") }) else { return nil }
            self.body = body
            self.negative = negative
        }

        /// What its separators say, alone or with the file's `known` decimal separator.
        func reading(_ known: DecimalSeparator?) -> Reading {
            if let known { return body.contains(known.rawValue) ? .decimal(known.rawValue) : .integer }
            let dots = body.filter { $0 == "." }.count, commas = body.filter { $0 == "," }.count
            if dots > 0 && commas > 0 { return .decimal(body.lastIndex(of: ".")! > body.lastIndex(of: ",")! ? "." : ",") }
            guard dots + commas == 1 else { return .integer }
            let separator: Character = dots == 1 ? "." : ","
            let (whole, fraction) = split(at: separator)
            // NB: only "1.234" to "999.999" could group thousands: "0.015", "12.5" and "1234.567" cannot.
            let couldGroup = fraction.count == 3 && (1...3).contains(whole.count) && !whole.hasPrefix("0")
            return couldGroup && !spaced ? .twoWays(separator) : .decimal(separator)
        }

        func split(at separator: Character) -> (String, String) {
            guard let index = body.lastIndex(of: separator) else { return (body, "") }
            return (String(body[..<index]), String(body[body.index(after: index)...]))
        }
    }
}

/// Dates as people type them, in their time zone.
public enum DateText {
    /// Which comes first in a date written with slashes or dots: a bank's file says it once for all its rows.
    public enum Order: String, Sendable, CaseIterable {
        /// 20/11/2026
        case dmy
        /// 11/20/2026
        case mdy
        /// 2026/11/20
        case ymd

        /// "day first (20/11/2026)".
        public var name: String {
            switch self {
            case .dmy: return "day first (20/11/2026)"
            case .mdy: return "month first (11/20/2026)"
            case .ymd: return "year first (2026/11/20)"
            }
        }
    }

    /// `2026-11-20` (noon), `2026-11-20T14:30`, `2026-11-20 14:30[:05]`, with a zone (`Z`, `+05:00`)
    /// or in the calendar's, `20/11/2026` (or as `order` says), `today`, `yesterday`. Refuses a
    /// date before 1970 or after tomorrow: a transaction is something that happened.
    public static func parse(_ text: String, now: Int64, calendar: Calendar, order: Order? = nil) throws(SpendingError) -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let nowDate = Date(timeIntervalSince1970: Double(now) / 1000)
        switch trimmed {
        case "today", "now": return now
        case "yesterday":
            guard let date = calendar.date(byAdding: .day, value: -1, to: nowDate) else { throw .invalidDate(text) }
            return Int64(date.timeIntervalSince1970 * 1000)
        default: break
        }
        var year = 0, month = 0, day = 0, hour = 12, minute = 0, second = 0
        var calendar = calendar
        let parts = trimmed.split(whereSeparator: { $0 == "t" || $0 == " " }).map(String.init)
        guard (1...2).contains(parts.count) else { throw .invalidDate(text) }
        let dashed = parts[0].contains("-")
        let texts = parts[0].split(separator: parts[0].contains("/") ? "/" : (parts[0].contains(".") ? "." : "-"), omittingEmptySubsequences: false)
        let dateParts = texts.map { Int($0) }
        guard dateParts.count == 3, let a = dateParts[0], let b = dateParts[1], let c = dateParts[2] else { throw .invalidDate(text) }
        switch dashed || texts[0].count == 4 ? .ymd : order ?? .dmy {
        case .ymd: (year, month, day) = (a, b, c)
        case .dmy: (day, month, year) = (a, b, c)
        case .mdy: (month, day, year) = (a, b, c)
        }
        if parts.count == 2 {
            var time = Substring(parts[1])
            if time.hasSuffix("z") {
                calendar.timeZone = TimeZone(secondsFromGMT: 0)!
                time = time.dropLast()
            } else if let sign = time.lastIndex(where: { $0 == "+" || $0 == "-" }) {
                let offset = time[time.index(after: sign)...].filter { $0 != ":" }
                guard [2, 4].contains(offset.count), let hours = Int(offset.prefix(2)), let minutes = Int(offset.dropFirst(2).isEmpty ? "0" : String(offset.dropFirst(2))),
                      hours <= 14, minutes < 60, let zone = TimeZone(secondsFromGMT: (time[sign] == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)) else {
                    throw .invalidDate(text)
                }
                calendar.timeZone = zone
                time = time[..<sign]
            }
            let fields = time.split(separator: ":", omittingEmptySubsequences: false)
            // NB: the export's seconds carry milliseconds ("05.120"): the minute is what counts.
            let numbers = fields.enumerated().map { index, field in Int(index == 2 ? field.prefix { $0 != "." } : field) }
            guard (2...3).contains(numbers.count), let h = numbers[0], let m = numbers[1] else { throw .invalidDate(text) }
            (hour, minute, second) = (h, m, numbers.count == 3 ? (numbers[2] ?? -1) : 0)
        }
        guard year >= 1970 else {
            if year >= 1000 { throw .dateOutOfRange(text) }
            throw .invalidDate(text)
        }
        guard year <= 9999, (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
              (0...59).contains(minute), (0...59).contains(second) else { throw .invalidDate(text) }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { throw .invalidDate(text) }
        // NB: tomorrow is allowed: the person's day may run ahead of the device's time zone.
        if let limit = calendar.date(byAdding: .day, value: 2, to: calendar.startOfDay(for: nowDate)), date >= limit {
            throw .futureDate(text)
        }
        return Int64(date.timeIntervalSince1970 * 1000)
    }

    /// `2026-11-20 14:30` in the calendar's time zone.
    public static func format(_ millis: Int64, calendar: Calendar, withTime: Bool = true) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: Double(millis) / 1000))
        let day = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        return withTime ? day + String(format: " %02d:%02d", parts.hour ?? 0, parts.minute ?? 0) : day
    }
}
