/// A hybrid logical clock stamp as the sync protocol writes it:
/// `UUUUUUUUUUUUU-CCCCC-NODE` — 13-digit zero-padded Unix milliseconds, a 5-digit zero-padded
/// counter and the device's node id. Its text sorts lexicographically in causal order, so
/// either side may compare stamps as plain strings.
public struct HLCStamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let maxCounter = 99_999
    public static let maxNodeLength = 64

    /// Unix milliseconds.
    public let millis: Int64
    public let counter: Int
    public let node: String

    public init(millis: Int64, counter: Int, node: String) {
        precondition((0...9_999_999_999_999).contains(millis), "HLC milliseconds out of range")
        precondition((0...Self.maxCounter).contains(counter), "HLC counter out of range")
        self.millis = millis
        self.counter = counter
        self.node = node
    }

    /// Reads a stamp; nil when `text` is not in the documented form.
    public init?(parsing text: String) {
        let parts = text.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 13, parts[1].count == 5,
              parts[0].utf8.allSatisfy(Self.isDigit), parts[1].utf8.allSatisfy(Self.isDigit),
              let millis = Int64(parts[0]), let counter = Int(parts[1]),
              (1...Self.maxNodeLength).contains(parts[2].count),
              parts[2].utf8.allSatisfy({ Self.isDigit($0) || ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x41 && $0 <= 0x5a) || $0 == 0x5f })
        else { return nil }
        self.init(millis: millis, counter: counter, node: String(parts[2]))
    }

    public var description: String {
        let millisText = String(millis), counterText = String(counter)
        return String(repeating: "0", count: 13 - millisText.count) + millisText + "-"
            + String(repeating: "0", count: 5 - counterText.count) + counterText + "-" + node
    }

    public static func < (lhs: HLCStamp, rhs: HLCStamp) -> Bool {
        (lhs.millis, lhs.counter, lhs.node) < (rhs.millis, rhs.counter, rhs.node)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}
