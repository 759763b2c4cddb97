import Foundation

/// What makes a username, an email address and a password acceptable at registration.
enum AccountRules {
    static let usernameLengths = 3...32
    static let passwordMinimum = 8
    /// NB: bcrypt reads only the first 72 bytes; longer passwords would be silently cut.
    static let passwordMaximumBytes = 72

    /// The username, unchanged, if it is 3–32 ASCII letters, digits, `_`, `.` or `-`.
    static func username(_ raw: String) throws -> String {
        guard usernameLengths.contains(raw.count) else {
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

    /// The email address, trimmed, if it looks like `local@domain.tld`.
    static func email(_ raw: String) throws -> String {
        let email = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        let invalid = APIError.badRequest("email must be a valid address such as name@example.com")
        guard email.count <= 254 else { throw invalid }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw invalid }
        let local = parts[0], domain = parts[1]
        guard !local.isEmpty, local.count <= 64, !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..") else {
            throw invalid
        }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }) else {
            throw invalid
        }
        let forbidden = CharacterSet.whitespacesAndNewlines.union(.controlCharacters).union(CharacterSet(charactersIn: "<>()[],;:\\\""))
        guard email.unicodeScalars.allSatisfy({ !forbidden.contains($0) }) else { throw invalid }
        return email
    }

    static func password(_ raw: String) throws -> String {
        try TextRules.check(raw, field: "password")
        guard raw.count >= passwordMinimum else {
            throw APIError.badRequest("password must be at least \(passwordMinimum) characters long")
        }
        guard raw.utf8.count <= passwordMaximumBytes else {
            throw APIError.badRequest("password must be at most \(passwordMaximumBytes) bytes long")
        }
        return raw
    }

    /// The key that makes `Alice@Example.com` and `alice@example.com` one account.
    static func key(_ value: String) -> String { value.lowercased() }
}
