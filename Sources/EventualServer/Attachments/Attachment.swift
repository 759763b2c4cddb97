import Foundation
import EventualAPI

/// What the server has of one blob in one space.
struct AttachmentStatus: Sendable, Equatable {
    let space: String
    let sha256: String
    let size: Int64
    /// The bytes in; the next chunk starts here.
    let received: Int64
    /// Every byte is in and matched the digest.
    let complete: Bool
    /// Known once the first bytes are in.
    let contentType: AttachmentContentType?
}

/// The server's limits on attachments (from `ServerConfiguration`).
struct AttachmentLimits: Sendable {
    /// The largest blob, in bytes.
    var maxBytes: Int64 = 20 * 1_048_576
    /// The largest chunk one request carries.
    var maxChunkBytes: Int = 1_048_576
    /// How long a blob no record refers to, or an upload left incomplete, is kept after it was last touched.
    var gracePeriod: Duration = .seconds(24 * 3600)
}

/// The part of a blob a download asked for (`Range: bytes=...`).
enum AttachmentRange: Sendable, Equatable {
    /// Every byte (no range, or one the server does not serve).
    case whole
    /// The bytes `first...last`, both within the blob.
    case part(first: Int64, last: Int64)

    /// The range a `Range` header asks for in a blob of `size` bytes: `bytes=N-`, `bytes=N-M` or
    /// `bytes=-N` (the last N). Anything else is ignored, as RFC 9110 allows; a range starting at
    /// or past the end is refused (416).
    static func parse(_ header: String?, size: Int64) throws(Refusal) -> AttachmentRange {
        guard let header else { return .whole }
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes=") else { return .whole }
        // NB: a list of ranges arrives cut at its first comma (RequestScope); serve the first anyway.
        let spec = text.dropFirst("bytes=".count).split(separator: ",", maxSplits: 1).first ?? ""
        let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return .whole }
        let firstText = bounds[0].trimmingCharacters(in: .whitespaces), lastText = bounds[1].trimmingCharacters(in: .whitespaces)
        // NB: a position of any length is read, one past Int64 as Int64.max: past every blob's end all the same.
        let position = { (text: String) -> Int64? in
            guard !text.isEmpty, text.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
            return Int64(text) ?? .max
        }
        if firstText.isEmpty {
            guard let count = position(lastText), count > 0 else { return .whole }
            return .part(first: count >= size ? 0 : size - count, last: size - 1)
        }
        guard let first = position(firstText) else { return .whole }
        var last = size - 1
        if !lastText.isEmpty {
            guard let asked = position(lastText), asked >= first else { return .whole }
            last = min(asked, size - 1)
        }
        guard first < size else {
            throw .rangeNotSatisfiable("The range starts at byte \(first), and the attachment has \(size) bytes")
        }
        return .part(first: first, last: last)
    }
}
