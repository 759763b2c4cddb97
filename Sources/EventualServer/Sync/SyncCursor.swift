import Crypto
import Foundation

/// Where a device stands in each of its spaces: the seq of the last change it pulled from each.
///
/// On the wire it is an opaque token, `s1.` then one `<key><seq>` per space joined by `.`, where
/// the key is 11 characters of base64url of a SHA-256 of the space's id. NB: a key rather than the
/// id keeps the token short whatever the ids (100 spaces take about 3,000 of the 4,096 characters
/// the contract allows); two of one person's spaces sharing 64 bits of hash is not a risk worth a
/// longer token. An older cursor of digits is a position in the person's personal space.
///
/// A first pull (no cursor) sends no deleted record: the device holds nothing they could delete.
/// Its cursor keeps, per space, the space's last seq when that pull began (`-<head>` after the
/// position): until the position passes it, records deleted at or below the head are left out.
/// One deleted later may have reached the device alive, so its deletion is sent.
struct SyncCursor: Equatable, Sendable {
    /// The seq pulled so far, by space key (`key(of:)`); a space not here starts from 0.
    private(set) var positions: [String: Int64] = [:]
    /// The last seq of each space when a first pull began, while the position is below it.
    private(set) var heads: [String: Int64] = [:]

    static let version = "s1"
    /// Characters of a space's key.
    static let keyLength = 11
    /// Most digits of a seq: any 18 digits fit in an Int64, and no database counts that far.
    static let maxSeqDigits = 18

    init() {}

    /// The position of a space, 0 for one the cursor does not hold.
    func position(of spaceID: String) -> Int64 { positions[Self.key(of: spaceID)] ?? 0 }

    /// Whether the cursor holds no position in any space: a pull from nothing.
    var isEmpty: Bool { positions.isEmpty }

    /// Whether the cursor holds a position in the space.
    func holds(_ spaceID: String) -> Bool { positions[Self.key(of: spaceID)] != nil }

    /// The seq at or below which deleted records are left out (a first pull's), nil when none are.
    func head(of spaceID: String) -> Int64? { heads[Self.key(of: spaceID)] }

    mutating func set(_ seq: Int64, for spaceID: String) {
        let key = Self.key(of: spaceID)
        positions[key] = seq
        if let head = heads[key], seq >= head { heads[key] = nil }
    }

    /// Starts a space as a first pull does: from 0, leaving out what was deleted by `head`.
    mutating func startFresh(_ spaceID: String, head: Int64) {
        let key = Self.key(of: spaceID)
        positions[key] = 0
        heads[key] = head > 0 ? head : nil
    }

    /// The key of a space in a token.
    static func key(of spaceID: String) -> String {
        let digest = SHA256.hash(data: Data(spaceID.utf8))
        return Data(digest.prefix(8)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The token a pull sends; the same positions always make the same token.
    var token: String {
        ([Self.version] + positions.sorted { $0.key < $1.key }.map { key, seq in
            heads[key].map { "\(key)\(seq)-\($0)" } ?? "\(key)\(seq)"
        }).joined(separator: ".")
    }

    /// The cursor a `since` names: absent for a first pull, a token a pull sent, or an older
    /// cursor of 1 to 18 digits (a position in `personalSpace`).
    init(parsing since: String?, personalSpace: String) throws(APIError) {
        guard let since else { return }
        let malformed = APIError.badRequest("since must be a cursor returned by an earlier pull (a token, or an older cursor of 1 to"
            + " \(Self.maxSeqDigits) digits), not '\(since.prefix(40))'")
        if let legacy = Self.seq(Substring(since)) {
            set(legacy, for: personalSpace)
            return
        }
        let parts = since.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.first == Substring(Self.version) else { throw malformed }
        for part in parts.dropFirst() {
            guard part.utf8.count > Self.keyLength else { throw malformed }
            let numbers = part.dropFirst(Self.keyLength).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard let seq = Self.seq(numbers[0]) else { throw malformed }
            let key = String(part.prefix(Self.keyLength))
            guard key.utf8.allSatisfy(Self.isKeyByte), positions.updateValue(seq, forKey: key) == nil else { throw malformed }
            if numbers.count == 2 {
                guard let head = Self.seq(numbers[1]), head > seq else { throw malformed }
                heads[key] = head
            }
        }
    }

    /// Positions held for spaces other than `spaceIDs` dropped.
    func keeping(only spaceIDs: some Sequence<String>) -> SyncCursor {
        let kept = Set(spaceIDs.map(Self.key(of:)))
        var cursor = SyncCursor()
        cursor.positions = positions.filter { kept.contains($0.key) }
        cursor.heads = heads.filter { kept.contains($0.key) }
        return cursor
    }

    private static func seq(_ digits: Substring) -> Int64? {
        guard (1...maxSeqDigits).contains(digits.utf8.count),
              digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int64(digits)
    }

    private static func isKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
