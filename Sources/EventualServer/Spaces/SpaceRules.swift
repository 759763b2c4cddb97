import EventualAPI

/// What a space call accepts: exactly the `pattern`, `minLength` and `maxLength` of `NewSpace`,
/// `NewInvitation` and the path parameters in `openapi.yaml`. Lengths count Unicode code points.
enum SpaceRules {
    static let idLengths = 1...128
    static let nameLengths = 1...60

    /// An id (a space's, an invitation's, a username in a path), unchanged: 1 to 128 characters
    /// without control characters.
    static func id(_ raw: String, field: String) throws(APIError) -> String {
        try TextRules.check(raw, field: field)
        guard idLengths.contains(raw.unicodeScalars.count) else {
            throw .badRequest("\(field) must be 1 to \(idLengths.upperBound) characters long")
        }
        return raw
    }

    /// A space's name, trimmed of the spaces around it: 1 to 60 characters, not only spaces.
    static func name(_ raw: String) throws(APIError) -> String {
        try TextRules.check(raw, field: "name")
        guard nameLengths.contains(raw.unicodeScalars.count) else {
            throw .badRequest("name must be 1 to \(nameLengths.upperBound) characters long")
        }
        let name = TextRules.trimmingSpaces(raw)
        guard !name.isEmpty else { throw .badRequest("name must not be only spaces") }
        return name
    }

    /// Whom an invitation is for: an email address when it holds '@', else a username.
    static func invitee(_ raw: String) throws -> Invitee {
        if raw.contains("@") {
            return .email(try AccountRules.email(raw))
        }
        guard let username = try? AccountRules.username(raw) else {
            throw APIError.badRequest("invitee must be a username (3 to 32 letters, digits, '_', '.' or '-') or an email address")
        }
        return .username(username)
    }
}
