import EventualAPI
import Foundation

/// What makes a username, an email address and a password acceptable at registration: exactly the
/// `pattern`, `minLength` and `maxLength` of `Registration` in `openapi.yaml`. Lengths count
/// Unicode code points, as JSON Schema does.
enum AccountRules {
    static let usernameLengths = 3...32
    static let emailMaximum = 254
    static let passwordLengths = 8...72

    /// The username, unchanged, if it is 3–32 ASCII letters, digits, `_`, `.` or `-`.
    static func username(_ raw: String) throws -> String {
        guard usernameLengths.contains(raw.unicodeScalars.count) else {
            throw APIError.badRequest("username must be 3 to 32 characters long")
        }
        let allowed = raw.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "_.-".unicodeScalars.contains(scalar))
        }
        guard allowed else {
            throw APIError.badRequest("username may contain only letters, digits, '_', '.' and '-'")
        }
        return raw
    }

    /// The email address, unchanged, if it looks like `local@domain.tld` in printable ASCII.
    ///
    /// NB: kept as sent. Surrounding spaces are refused rather than trimmed, and there is no
    /// separate 64-character limit on the local part: JSON Schema can state neither, and the
    /// contract states every rule the server checks.
    static func email(_ raw: String) throws -> String {
        let invalid = APIError.badRequest("email must be a valid address such as name@example.com")
        guard raw.unicodeScalars.count <= emailMaximum else {
            throw APIError.badRequest("email must be at most \(emailMaximum) characters long")
        }
        if let first = raw.unicodeScalars.first, let last = raw.unicodeScalars.last,
           first.properties.isWhitespace || last.properties.isWhitespace {
            throw APIError.badRequest("email must not start or end with spaces")
        }
        guard raw.unicodeScalars.allSatisfy({ $0 == "@" || $0 == "." || isAtom($0) }) else {
            throw APIError.badRequest(#"email may contain only printable ASCII characters other than spaces and < > ( ) [ ] , ; : \ ""#)
        }
        let parts = raw.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw invalid }
        let local = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        guard local.allSatisfy({ !$0.isEmpty }) else { throw invalid }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }) else {
            throw invalid
        }
        return raw
    }

    /// A character of a dot-separated part of an address: printable ASCII but space and `"(),.:;<>@[\]`.
    private static func isAtom(_ scalar: Unicode.Scalar) -> Bool {
        (0x21...0x7E).contains(scalar.value) && !#"()<>[]\,;:"@."#.unicodeScalars.contains(scalar)
    }

    /// The password, unchanged, if it is 8 to 72 characters without control characters.
    ///
    /// NB: bcrypt reads only 72 bytes; `PasswordHasher` hashes a longer password (in bytes) through
    /// SHA-256 first, so that every character counts.
    static func password(_ raw: String) throws -> String {
        try TextRules.check(raw, field: "password")
        guard passwordLengths.contains(raw.unicodeScalars.count) else {
            throw APIError.badRequest("password must be \(passwordLengths.lowerBound) to \(passwordLengths.upperBound) characters long")
        }
        return raw
    }

    /// The key that makes `Alice@Example.com` and `alice@example.com` one account.
    static func key(_ value: String) -> String { value.lowercased() }
}
