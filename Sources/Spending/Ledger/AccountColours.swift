/// The colours an account may be shown in: a name screens know, or `#RRGGBB` (`#RGB`).
public enum AccountColours {
    /// The names accepted, as people say them.
    public static let names = [
        "red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "grey", "gray", "black", "white",
        "teal", "cyan", "navy", "indigo", "violet", "magenta", "maroon", "olive", "lime", "gold", "silver", "beige",
        "turquoise", "lavender", "coral", "salmon", "mint",
    ]

    /// `text` as kept (a name in lower case, a hex colour as typed), or nil when it is neither.
    static func normalized(_ text: String) -> String? {
        let lowered = text.lowercased()
        if names.contains(lowered) { return lowered }
        let hex = lowered.dropFirst()
        guard lowered.hasPrefix("#"), [3, 6].contains(hex.count), hex.allSatisfy(\.isHexDigit) else { return nil }
        return lowered
    }
}
