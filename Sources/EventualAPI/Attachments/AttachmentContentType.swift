/// The kinds of file an attachment may be, recognised by their first bytes rather than by a
/// name or a declared type: the device refuses anything else before queueing it, the server
/// once the first chunk is in.
public enum AttachmentContentType: String, Sendable, CaseIterable {
    case jpeg = "image/jpeg"
    case png = "image/png"
    case heic = "image/heic"

    /// The most bytes `recognise` looks at: an ISO-BMFF box's size, `ftyp` and the brand.
    public static let bytesNeeded = 12

    /// The brands of an ISO-BMFF `ftyp` box that say HEIC (or HEIF, which phones write the same way).
    private static let heicBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "mif1", "msf1"]

    /// The kind the first bytes of a file show (at most `bytesNeeded` are read); nil for anything
    /// else, or for too few bytes to tell.
    public static func recognise<Bytes: Collection>(_ bytes: Bytes) -> AttachmentContentType? where Bytes.Element == UInt8 {
        let head = Array(bytes.prefix(bytesNeeded))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if head.count >= 12, head[4..<8].elementsEqual("ftyp".utf8),
           heicBrands.contains(String(decoding: head[8..<12], as: UTF8.self)) {
            return .heic
        }
        return nil
    }

    /// What a person is told when a file is none of these.
    public static let refusal = "Only JPEG, PNG and HEIC images can be attached: these bytes are none of them"
}
