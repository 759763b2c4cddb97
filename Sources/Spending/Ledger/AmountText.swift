import EventualAPI
import Foundation

/// Turns what a person (or a bank's export) wrote into minor units, without floating point.
public enum AmountText {
    /// The largest amount accepted, in minor units: beyond it a number is a typing mistake.
    public static let maxMinor: Int64 = 1_000_000_000_000_000

    /// An amount above zero: "12.50", "12,50", "1.234,56", "COP 12.500" for pesos with a
    /// thousands dot. A separator followed by more digits than the currency has is a thousands one.
    public static func parse(_ text: String, currency: String) throws(SpendingError) -> Int64 {
        let value = try parseSigned(text, currency: currency)
        guard value > 0 else { throw .invalidAmount(text) }
        return value
    }

    /// A signed amount (a bank's export: negative is money out).
    public static func parseSigned(_ text: String, currency: String) throws(SpendingError) -> Int64 {
        var body = text.trimmingCharacters(in: .whitespaces)
        if body.uppercased().hasPrefix(currency) { body = String(body.dropFirst(currency.count)) }
        body = String(body.unicodeScalars.filter { !" \u{A0}\u{202F}'€$£¥".unicodeScalars.contains($0) }.map(Character.init))
        var negative = false
        if body.hasPrefix("-") || body.hasPrefix("−") { negative = true; body.removeFirst() } else if body.hasPrefix("+") { body.removeFirst() }
        if body.hasPrefix("(") && body.hasSuffix(")") { negative = true; body = String(body.dropFirst().dropLast()) }
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == ",") }) else { throw .invalidAmount(text) }
        let digits = Currency.digits(currency)
        let dots = body.filter { $0 == "." }.count, commas = body.filter { $0 == "," }.count
        var decimal: Character?
        if dots > 0 && commas > 0 {
            decimal = body.lastIndex(of: ".")! > body.lastIndex(of: ",")! ? "." : ","
        } else if dots + commas == 1 {
            let separator: Character = dots == 1 ? "." : ","
            let after = body.split(separator: separator, omittingEmptySubsequences: false)[1].count
            decimal = (after >= 1 && after <= max(digits, 2) && !(after == 3 && digits < 3)) ? separator : nil
        }
        var whole = body, fraction = ""
        if let decimal {
            guard body.filter({ $0 == decimal }).count == 1, let index = body.lastIndex(of: decimal) else { throw .invalidAmount(text) }
            whole = String(body[..<index])
            fraction = String(body[body.index(after: index)...])
        }
        // NB: thousands separators group by three ("12.5055" is a typing mistake, not 125,055).
        let groups = whole.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "." || $0 == "," })
        if groups.count > 1, groups.first!.isEmpty || groups.first!.count > 3 || groups.dropFirst().contains(where: { $0.count != 3 }) {
            throw .invalidAmount(text)
        }
        whole.removeAll { $0 == "." || $0 == "," }
        if whole.isEmpty { whole = "0" }
        guard fraction.count <= digits, whole.count <= 16, fraction.allSatisfy(\.isNumber), let units = Int64(whole) else {
            throw .invalidAmount(text)
        }
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        let padded = fraction + String(repeating: "0", count: digits - fraction.count)
        let (product, overflow) = units.multipliedReportingOverflow(by: scale)
        guard !overflow, let minor = Int64(padded.isEmpty ? "0" : padded) else { throw .invalidAmount(text) }
        let total = product + minor
        guard total <= maxMinor else { throw .invalidAmount(text) }
        return negative ? -total : total
    }
}

/// Dates as people type them, in their time zone.
public enum DateText {
    /// `2026-11-20` (noon), `2026-11-20T14:30`, `2026-11-20 14:30[:05]`, `20/11/2026`, `today`, `yesterday`.
    public static func parse(_ text: String, now: Int64, calendar: Calendar) throws(SpendingError) -> Int64 {
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
        let parts = trimmed.split(whereSeparator: { $0 == "t" || $0 == " " }).map(String.init)
        guard (1...2).contains(parts.count) else { throw .invalidDate(text) }
        let dateParts = parts[0].split(separator: parts[0].contains("/") ? "/" : (parts[0].contains(".") ? "." : "-"), omittingEmptySubsequences: false)
            .map { Int($0) }
        guard dateParts.count == 3, let a = dateParts[0], let b = dateParts[1], let c = dateParts[2] else { throw .invalidDate(text) }
        if parts[0].contains("-") { (year, month, day) = (a, b, c) } else { (day, month, year) = (a, b, c) }
        if parts.count == 2 {
            let time = parts[1].split(separator: ":").map { Int($0) }
            guard (2...3).contains(time.count), let h = time[0], let m = time[1] else { throw .invalidDate(text) }
            (hour, minute, second) = (h, m, time.count == 3 ? (time[2] ?? -1) : 0)
        }
        guard (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
              (0...59).contains(minute), (0...59).contains(second) else { throw .invalidDate(text) }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { throw .invalidDate(text) }
        return Int64(date.timeIntervalSince1970 * 1000)
    }

    /// `2026-11-20 14:30` in the calendar's time zone.
    public static func format(_ millis: Int64, calendar: Calendar, withTime: Bool = true) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: Double(millis) / 1000))
        let day = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        return withTime ? day + String(format: " %02d:%02d", parts.hour ?? 0, parts.minute ?? 0) : day
    }
}
