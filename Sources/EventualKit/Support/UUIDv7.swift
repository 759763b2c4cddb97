import EventualAPI
import Foundation
import Synchronization

/// Time-ordered UUIDs (RFC 9562, version 7): 48 bits of Unix milliseconds, a 12-bit counter
/// that keeps ids made in one millisecond in order (RFC 9562 §6.2, method 1), then random bits.
/// Outbox ids are these, so they sort by creation and keep the server's index local.
public enum UUIDv7 {
    private static let last = Mutex<(millis: Int64, counter: Int)>((0, 0))

    public static func make(millis requested: Int64 = UnixMillis.now()) -> String {
        let (millis, counter) = last.withLock { last -> (Int64, Int) in
            if requested > last.millis {
                last = (requested, Int.random(in: 0..<512))
            } else if last.counter < 0xfff {
                last.counter += 1
            } else {
                // NB: 4,096 ids in one millisecond: borrow the next millisecond rather than wrap.
                last = (last.millis + 1, 0)
            }
            return last
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in 8..<16 { bytes[index] = UInt8.random(in: .min ... .max, using: &generator) }
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: millis >> (8 * (5 - index))) }
        bytes[6] = 0x70 | UInt8((counter >> 8) & 0x0f)
        bytes[7] = UInt8(counter & 0xff)
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
