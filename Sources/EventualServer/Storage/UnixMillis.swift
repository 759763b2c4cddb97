import Foundation

/// Time as the database stores it: Unix milliseconds.
enum UnixMillis {
    static func now() -> Int64 { milliseconds(Date()) }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    static func date(milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}
