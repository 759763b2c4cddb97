import Foundation

/// ETags as `If-None-Match` sends them back: one, a list, weak or strong, or `*`.
enum ETag {
    static let maxHeaderLength = 128

    /// A 400 when `If-None-Match` is longer than the contract allows.
    static func checkLength(_ parsed: String?) throws(APIError) {
        _ = try matches(parsed, "")
    }

    /// True when `If-None-Match` names `etag` (or `*`); a 400 for a header longer than the contract allows.
    static func matches(_ parsed: String?, _ etag: String) throws(APIError) -> Bool {
        guard let header = RequestScope.current?.ifNoneMatch ?? parsed else { return false }
        guard header.unicodeScalars.count <= maxHeaderLength else {
            throw .badRequest("If-None-Match must be at most \(maxHeaderLength) characters long")
        }
        for candidate in header.split(separator: ",") {
            var value = candidate.trimmingCharacters(in: .whitespaces)
            if value == "*" { return true }
            if value.hasPrefix("W/") { value.removeFirst(2) }
            if value == etag { return true }
        }
        return false
    }
}
