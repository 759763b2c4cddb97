import Foundation

/// Time as the wire, the server's database and the device's database carry it: Unix milliseconds.
public enum UnixMillis {
    /// Now, rounded down (a stamp never claims a moment that has not come yet).
    public static func now() -> Int64 { milliseconds(Date()) }

    public static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    public static func date(milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

extension Duration {
    /// The duration in whole milliseconds (rounded toward zero).
    public var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }

    /// The duration in milliseconds with their fraction, for timings.
    public var fractionalMilliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}
