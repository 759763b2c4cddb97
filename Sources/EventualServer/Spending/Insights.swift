import EventualAPI
import Foundation

/// One synced transaction as the insights read it.
struct SpentRecord: Sendable, Equatable {
    let id: String
    let kind: String
    let amountMinor: Int64
    let currency: String
    let category: String
    let occurredAt: Int64
    let latitude: Double?
    let longitude: Double?

    init(id: String, kind: String = "expense", amountMinor: Int64, currency: String = "EUR", category: String,
         occurredAt: Int64, latitude: Double? = nil, longitude: Double? = nil) {
        self.id = id
        self.kind = kind
        self.amountMinor = amountMinor
        self.currency = currency
        self.category = category
        self.occurredAt = occurredAt
        self.latitude = latitude
        self.longitude = longitude
    }

    /// From a synced record's merged fields; nil when a field it needs is missing.
    init?(id: String, fields: [String: SyncValue]) {
        // NB: an amount no app records (beyond Money.largestMinorUnits, or below zero) came from
        // another client; it is left out rather than let a sum of a few overflow.
        guard let kind = fields["kind"]?.stringValue, let amount = fields["amountMinor"]?.int64Value,
              (0...Money.largestMinorUnits).contains(amount),
              let currency = fields["currency"]?.stringValue, let at = fields["occurredAt"]?.int64Value,
              // NB: so is a time no record may hold (one stored before records were bounded): the
              // differences of two times within it never overflow.
              at.magnitude <= SyncValue.largestMagnitude.magnitude else { return nil }
        self.init(id: id, kind: kind, amountMinor: amount, currency: currency,
                  category: fields["category"]?.stringValue ?? "other", occurredAt: at,
                  latitude: fields["latitude"]?.doubleValue, longitude: fields["longitude"]?.doubleValue)
    }
}

/// A finding about a person's spending, with the sentence that explains it.
struct Finding: Sendable, Equatable {
    enum Kind: String, Sendable { case location, amount, category }
    let kind: Kind
    let message: String
    let transactionId: String?
    let category: String?
    let currency: String?
    /// The transaction's time, or the computation's for a category.
    let at: Int64
}

/// The server's explained findings (seed F4): computed from the user's synced transactions.
enum Insights {
    static let locationDistance = 50_000.0
    static let locationWindow: Int64 = 24 * 3600 * 1000
    static let madLimit = 3.5
    static let minimumHistory = 5
    /// Earlier expenses an amount is compared with, at most (the newest ones).
    static let historyWindow = 100
    static let categoryRise = 0.30
    static let day: Int64 = 24 * 3600 * 1000
    static let maxFindings = 50

    /// Every finding, newest first, at most `maxFindings`.
    static func find(_ records: [SpentRecord], now: Int64) -> [Finding] {
        let expenses = records.filter { $0.kind == "expense" && $0.occurredAt <= now }
            .sorted { ($0.occurredAt, $0.id) < ($1.occurredAt, $1.id) }
        let all = locations(expenses) + amounts(expenses) + categories(expenses, now: now)
        return Array(all.sorted { ($0.at, $0.kind.rawValue) > ($1.at, $1.kind.rawValue) }.prefix(maxFindings))
    }

    /// A charge more than 50 km from the previous charge with a position, within 24 hours of it.
    static func locations(_ expenses: [SpentRecord]) -> [Finding] {
        var findings: [Finding] = []
        var previous: SpentRecord?
        for record in expenses {
            guard let lat = record.latitude, let lon = record.longitude else { continue }
            defer { previous = record }
            guard let before = previous, let lat0 = before.latitude, let lon0 = before.longitude,
                  record.occurredAt - before.occurredAt <= locationWindow else { continue }
            let distance = GeoPosition(latitude: lat0, longitude: lon0).distance(to: GeoPosition(latitude: lat, longitude: lon))
            guard distance > locationDistance else { continue }
            let hours = Double(record.occurredAt - before.occurredAt) / 3_600_000
            findings.append(Finding(
                kind: .location,
                message: "\(money(record.amountMinor, record.currency)) on \(record.category) on \(dayText(record.occurredAt)) was charged "
                    + "\(Int((distance / 1000).rounded())) km from the previous charge, \(oneDecimal(hours)) hours earlier "
                    + "(more than 50 km within 24 hours).",
                transactionId: record.id, category: record.category, currency: record.currency, at: record.occurredAt))
        }
        return findings
    }

    /// An expense more than 3.5 median absolute deviations from the median of at least 5 earlier
    /// expenses of its category and currency.
    static func amounts(_ expenses: [SpentRecord]) -> [Finding] {
        var findings: [Finding] = []
        let groups = Dictionary(grouping: expenses) { "\($0.category.lowercased())\u{1F}\($0.currency)" }
        for (_, group) in groups {
            for index in group.indices where index >= minimumHistory {
                let record = group[index]
                let earlier = group[max(0, index - historyWindow)..<index].map { Double($0.amountMinor) }
                let median = median(earlier)
                let mad = Self.median(earlier.map { abs($0 - median) })
                let deviation = abs(Double(record.amountMinor) - median)
                let amount = money(record.amountMinor, record.currency)
                let what = "your \(earlier.count) earlier \(record.category) expenses"
                if mad == 0 {
                    guard deviation > 0 else { continue }
                    // NB: a zero deviation means most earlier expenses cost the median, not all of them.
                    let usual = money(Int64(median.rounded()), record.currency)
                    let same = earlier.filter { $0 == median }.count
                    let how = same == earlier.count ? "that every one of \(what) cost"
                        : "that \(same) of \(what) cost (their median)"
                    findings.append(Finding(
                        kind: .amount,
                        message: "\(amount) on \(record.category) on \(dayText(record.occurredAt)) differs from the \(usual) \(how).",
                        transactionId: record.id, category: record.category, currency: record.currency, at: record.occurredAt))
                    continue
                }
                let score = deviation / mad
                guard score > madLimit else { continue }
                findings.append(Finding(
                    kind: .amount,
                    message: "\(amount) on \(record.category) on \(dayText(record.occurredAt)) is \(oneDecimal(score)) median absolute "
                        + "deviations from the median of \(what) (median \(money(Int64(median.rounded()), record.currency)), "
                        + "deviation \(money(Int64(mad.rounded()), record.currency)); more than 3.5 is unusual).",
                    transactionId: record.id, category: record.category, currency: record.currency, at: record.occurredAt))
            }
        }
        return findings
    }

    /// A category whose last 30 days cost more than 30% above its average per 30 days over the 90 days before.
    static func categories(_ expenses: [SpentRecord], now: Int64) -> [Finding] {
        var current: [String: (category: String, currency: String, minor: Int64)] = [:]
        var baseline: [String: Int64] = [:]
        for record in expenses {
            let key = "\(record.category.lowercased())\u{1F}\(record.currency)"
            let age = now - record.occurredAt
            if age < 30 * day {
                current[key, default: (record.category, record.currency, 0)].minor.addSaturating(record.amountMinor)
            } else if age < 120 * day {
                baseline[key, default: 0].addSaturating(record.amountMinor)
            }
        }
        var findings: [Finding] = []
        for (key, spent) in current.sorted(by: { $0.key < $1.key }) {
            guard let before = baseline[key], before > 0 else { continue }
            let average = Double(before) / 3
            guard Double(spent.minor) > average * (1 + categoryRise) else { continue }
            let percent = Int(((Double(spent.minor) / average - 1) * 100).rounded())
            findings.append(Finding(
                kind: .category,
                message: "\(spent.category.prefix(1).uppercased() + spent.category.dropFirst()): \(money(spent.minor, spent.currency)) in the last 30 days "
                    + "is \(percent)% above your average of \(money(Int64(average.rounded()), spent.currency)) per 30 days over the 90 days before.",
                transactionId: nil, category: spent.category, currency: spent.currency, at: now))
        }
        return findings
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    private static func money(_ minor: Int64, _ currency: String) -> String { Money(minorUnits: minor, currency: currency).description }

    private static func oneDecimal(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func dayText(_ millis: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(millis) / 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }
}

private extension Int64 {
    /// Adds, stopping at the largest value instead of trapping: a finding about an absurd sum is
    /// still a finding, a crash takes the server down for everyone.
    mutating func addSaturating(_ other: Int64) {
        let (sum, overflow) = addingReportingOverflow(other)
        self = overflow ? (other > 0 ? .max : .min) : sum
    }
}
