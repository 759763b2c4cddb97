/// Which characters a text of a request may hold: one rule for the server, which refuses a
/// request holding another with a 400 naming the field, and for the engine, which refuses such a
/// change before it is queued (`SyncChangeLimits`). The characters are named as
/// `ControlCharacters` names them.
///
/// NB: a NUL is the dangerous one. SQLite stores it whole but C strings read it back cut short
/// (a sync change id then never matches its duplicate check), PostgreSQL refuses it outright, and
/// bcrypt stops at it (a password of NULs would equal ""). Such input is refused, never truncated
/// or cleaned up silently.
public enum TextRules {
    /// What a field may contain besides printable text.
    public enum Allowance: Sendable {
        /// An identifier, a name, a key: no control character at all.
        case singleLine
        /// Free text (a description, a synced note): tabs and line breaks, no other control character.
        case multiLine
        /// A password as users registered it before these rules: anything but NUL.
        case anythingButNUL
    }

    /// The spaces a single-line field may hold but may not consist of, and that are trimmed from
    /// its ends: U+0020, no-break and the other Unicode space separators, line and paragraph
    /// separators. NB: the same set is spelled out in the `name` pattern of `openapi.yaml`;
    /// Foundation's `whitespaces` is not used because it differs between platforms.
    public static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }

    /// `value` without the spaces (`isSpace`) at its ends.
    public static func trimmingSpaces(_ value: String) -> String {
        let scalars = value.unicodeScalars
        guard let start = scalars.firstIndex(where: { !isSpace($0) }),
              let end = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(scalars[start...end])
    }

    /// The character `value` may not hold, named ("a NUL byte", "a tab", "the control character
    /// U+0007"), or nil if it is acceptable.
    public static func problem(in value: String, _ allowance: Allowance) -> String? {
        switch allowance {
        case .singleLine: return ControlCharacters.first(in: value)
        case .multiLine: return ControlCharacters.first(in: value, allowing: ["\t", "\n", "\r"])
        case .anythingButNUL: return value.unicodeScalars.contains("\u{0}") ? ControlCharacters.first(in: "\u{0}") : nil
        }
    }
}
