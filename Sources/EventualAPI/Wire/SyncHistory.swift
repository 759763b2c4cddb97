/// What a device remembers of a server's history, so that it notices when the server went back
/// in time (a backup restored, a point-in-time recovery) instead of skipping what comes after.
///
/// Every commit that moves a space's counter is filed in the server's history with a random tag.
/// A pull and a push answer the newest commit of each space they touched (`SyncHead`); the
/// device keeps the newest it heard per space and sends their tags with each pull (`seen`). A
/// tag the server's history does not hold is a commit the server lost: the pull answers it in
/// `rewound`, and the device sends back what it holds of those spaces, then pulls from nothing.
///
/// NB: a tag, not a seq: a restored server hands out the seqs it lost again, to other changes,
/// so a seq alone cannot tell the new history from the one the device saw.
public enum SyncHistory {
    /// Characters of a tag: 48 random bits in base64url.
    public static let tagLength = 8
    /// Most tags one pull may send (a person's spaces, with room to spare).
    public static let mostSeen = 400

    /// A new random tag for a commit.
    public static func newTag() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<tagLength).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// The `seen` query value of `tags`.
    public static func seenValue(_ tags: some Sequence<String>) -> String {
        tags.joined(separator: ".")
    }

    /// The tags a `seen` value holds; nil when it is not one (`seenValue`'s form).
    public static func tags(inSeen value: String) -> [String]? {
        let tags = value.split(separator: ".", omittingEmptySubsequences: false)
        guard tags.count <= mostSeen, tags.allSatisfy(isTag) else { return nil }
        return tags.map(String.init)
    }

    /// Whether `text` has a tag's form.
    public static func isTag(_ text: some StringProtocol) -> Bool {
        text.utf8.count == tagLength && text.utf8.allSatisfy { alphabetBytes.contains($0) }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    private static let alphabetBytes = Set(alphabet.map { $0.asciiValue! })
}

/// The newest commit of a space in the server's history: its seq and its tag.
public struct SyncHead: Codable, Sendable, Equatable {
    public let space: String
    public let seq: Int64
    public let tag: String

    public init(space: String, seq: Int64, tag: String) {
        self.space = space
        self.seq = seq
        self.tag = tag
    }
}
