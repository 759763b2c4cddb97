/// How many terminal columns text takes: East Asian wide characters and emoji take two, combining
/// marks, joiners and other invisible characters none, everything else one. Counted per grapheme
/// (what a person sees as one character), so "👩‍👩‍👧" is one emoji of two columns.
public enum DisplayWidth {
    /// The columns `text` takes on a terminal.
    public static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The columns one grapheme takes.
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        // NB: U+FE0F asks for the emoji form of a text-style character (☕︎ vs ☕️, #️⃣).
        if scalars.contains(where: { $0.properties.isEmojiPresentation })
            || (first.properties.isEmoji && scalars.contains("\u{FE0F}")) {
            return 2
        }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: return isWide(first) ? 2 : 1
        }
    }

    /// The longest start of `text` that takes at most `columns`.
    public static func prefix(_ text: String, columns: Int) -> String {
        var taken = 0
        var end = text.startIndex
        for index in text.indices {
            let width = of(text[index])
            guard taken + width <= columns else { break }
            taken += width
            end = text.index(after: index)
        }
        return String(text[..<end])
    }

    /// East Asian Wide and Fullwidth (Unicode's EastAsianWidth.txt, W and F): Hangul, CJK,
    /// kana, fullwidth forms; Swift's Unicode properties do not carry this one.
    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60,
             0xFFE0...0xFFE6, 0x1F200...0x1F2FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
