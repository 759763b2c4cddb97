/// The control characters a person may type by mistake (a tab pasted into a name, a NUL from a
/// script), named as a person would: one rule and one wording for every app and layer.
public enum ControlCharacters {
    /// The first control character of `text` not in `allowed`, named ("a tab", "a line break",
    /// "a NUL byte", "an escape character", "the control character U+0007"); nil when there is none.
    public static func first(in text: String, allowing allowed: Set<Unicode.Scalar> = []) -> String? {
        guard let scalar = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control && !allowed.contains($0) }) else {
            return nil
        }
        switch scalar {
        case "\t": return "a tab"
        case "\n", "\r", "\u{0B}", "\u{0C}", "\u{85}": return "a line break"
        case "\u{0}": return "a NUL byte"
        case "\u{1B}": return "an escape character"
        default:
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "the control character U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
    }
}
