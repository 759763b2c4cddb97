import Foundation

/// Time-ordered UUIDs (RFC 9562, version 7): 48 bits of Unix milliseconds, then random bits.
/// Outbox ids are these, so they sort by creation and keep the server's index local.
public enum UUIDv7 {
    public static func make(millis: Int64 = UnixTime.nowMillis()) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in 6..<16 { bytes[index] = UInt8.random(in: .min ... .max, using: &generator) }
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: millis >> (8 * (5 - index))) }
        bytes[6] = (bytes[6] & 0x0f) | 0x70
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let hex = bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
