/// Which characters a text field of a request may hold.
///
/// NB: a NUL is the dangerous one. SQLite stores it whole but C strings read it back cut short
/// (a sync change id then never matches its duplicate check), PostgreSQL refuses it outright, and
/// bcrypt stops at it (a password of NULs would equal ""). Such input is refused with a 400 that
/// names the field; it is never truncated or cleaned up silently.
enum TextRules {
    /// What a field may contain besides printable text.
    enum Allowance {
        /// An identifier, a name, a key: no control character at all.
        case singleLine
        /// Free text (a description, a synced note): tabs and line breaks, no other control character.
        case multiLine
        /// A password as users registered it before these rules: anything but NUL.
        case anythingButNUL
    }

    /// Throws a 400 naming `field` if `value` holds a character `allowance` does not permit.
    static func check(_ value: String, field: String, _ allowance: Allowance = .singleLine) throws(APIError) {
        if let problem = problem(in: value, allowance) {
            throw .badRequest("\(field) must not contain \(problem)")
        }
    }

    /// The spaces a single-line field may hold but may not consist of, and that are trimmed from
    /// its ends: U+0020, no-break and the other Unicode space separators, line and paragraph
    /// separators. NB: the same set is spelled out in the `name` pattern of `openapi.yaml`;
    /// Foundation's `whitespaces` is not used because it differs between platforms.
    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }

    /// `value` without the spaces (`isSpace`) at its ends.
    static func trimmingSpaces(_ value: String) -> String {
        let scalars = value.unicodeScalars
        guard let start = scalars.firstIndex(where: { !isSpace($0) }),
              let end = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(scalars[start...end])
    }

    /// Why `value` is refused ("a NUL character", "control characters"), or nil if it is acceptable.
    static func problem(in value: String, _ allowance: Allowance) -> String? {
        for scalar in value.unicodeScalars {
            let code = scalar.value
            if code == 0 { return "a NUL character (\\u0000)" }
            guard code < 0x20 || (0x7F...0x9F).contains(code) else { continue }
            switch allowance {
            case .anythingButNUL: continue
            case .multiLine where code == 0x09 || code == 0x0A || code == 0x0D: continue
            default: return "control characters (such as U+\(String(code, radix: 16, uppercase: true).leftPadded(to: 4)))"
            }
        }
        return nil
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
