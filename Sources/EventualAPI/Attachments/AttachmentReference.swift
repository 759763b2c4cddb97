/// How a synced record refers to an attachment: a field whose value is exactly the string
/// `sha256:` followed by the blob's SHA-256 in 64 lowercase hex digits. The engine writes it, the
/// server's housekeeping keeps every blob a record of its space refers to this way, and nothing
/// else is a reference (no other spelling, no upper-case digits).
public struct AttachmentReference: Sendable, Hashable, CustomStringConvertible {
    /// What every reference starts with.
    public static let prefix = "sha256:"

    /// The blob's SHA-256: 64 lowercase hex digits.
    public let sha256: String

    /// A reference to the blob with this digest; nil unless it is 64 lowercase hex digits.
    public init?(sha256: String) {
        guard Self.isDigest(sha256) else { return nil }
        self.sha256 = sha256
    }

    /// The reference a field's text holds; nil when the text is not exactly one.
    public init?(parsing text: String) {
        guard text.hasPrefix(Self.prefix) else { return nil }
        self.init(sha256: String(text.dropFirst(Self.prefix.count)))
    }

    /// The reference a synced value holds; nil for any other value.
    public init?(_ value: SyncValue) {
        guard case .string(let text) = value else { return nil }
        self.init(parsing: text)
    }

    /// The digest of these bytes (`SHA256.hash(data:)` as lowercase hex), as a reference.
    public init<Digest: Sequence>(digest: Digest) where Digest.Element == UInt8 {
        sha256 = Self.hex(digest)
    }

    /// `sha256:<digest>`: the text a field holds.
    public var description: String { Self.prefix + sha256 }

    /// The value a record's field holds.
    public var syncValue: SyncValue { .string(description) }

    /// Whether `text` is a SHA-256 as the wire spells it: 64 lowercase hex digits.
    public static func isDigest(_ text: String) -> Bool {
        let bytes = text.utf8
        return bytes.count == 64 && bytes.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// Bytes as lowercase hex digits.
    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
