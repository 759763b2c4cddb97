import Foundation

/// What a record's merge needs beyond its fields: the stamp of the change that last set each
/// field, the deltas added to each counter since its last set, and the stamp of its newest delete.
///
/// A pull sends it with every record as one opaque string (`SyncRecord.state`, `text`), made of the
/// server's stored columns as they are, so that it costs the server no decoding. A device keeps
/// it, and after the server was restored from a backup sends it back with the record
/// (`SyncChange.state`): the server merges it stamp by stamp, so the same record sent back twice,
/// or by two devices, ends the same, and nothing counted is counted twice.
public struct MergeState: Sendable, Equatable {
    /// The stamp of the change that last set each field.
    public var stamps: [String: HLCStamp] = [:]
    /// Per counter field, the deltas stamped after its last set, oldest first.
    public var deltas: [String: [Delta]] = [:]
    /// The stamp of the newest delete.
    public var tombstone: HLCStamp?

    /// One amount added to a counter.
    public struct Delta: Sendable, Equatable {
        public let stamp: HLCStamp
        public let amount: Double

        public init(stamp: HLCStamp, amount: Double) {
            self.stamp = stamp
            self.amount = amount
        }
    }

    public init(stamps: [String: HLCStamp] = [:], deltas: [String: [Delta]] = [:], tombstone: HLCStamp? = nil) {
        self.stamps = stamps
        self.deltas = deltas
        self.tombstone = tombstone
    }

    /// The key of `stamps` that holds the stamp of the newest change that made the record (an
    /// insert on a device): a record made again after its deletion starts clean. No field is named so.
    public static let madeKey = ""

    /// Most characters of a state a change may send back.
    public static let maxTextLength = 262_144

    // MARK: - As text

    /// `{"s":<stamps>,"d":<deltas>,"t":<tombstone>}` from the stored JSON of each part: `stamps` an
    /// object of field to stamp, `deltas` one of field to `[[stamp, amount], ...]` (nil: none),
    /// `tombstone` a stamp (nil: none). NB: spliced, not encoded: a pull sends one per record.
    public static func text(stamps: String, deltas: String?, tombstone: String?) -> String {
        var out = #"{"s":"#
        out += stamps
        out += #","d":"#
        out += deltas ?? "{}"
        out += #","t":"#
        if let tombstone { WireJSON.appendString(tombstone, to: &out) } else { out += "null" }
        return out + "}"
    }

    /// The state as `text(stamps:deltas:tombstone:)` writes it.
    public var text: String {
        Self.text(stamps: WireJSON.object(stamps.mapValues(\.description)), deltas: Self.deltasText(deltas),
                  tombstone: tombstone?.description)
    }

    /// Counters' deltas as stored: `{"field":[[stamp, amount], ...], ...}`, fields sorted; nil for none.
    public static func deltasText(_ deltas: [String: [Delta]]) -> String? {
        guard !deltas.isEmpty else { return nil }
        var out = "{"
        for (index, name) in deltas.keys.sorted().enumerated() {
            if index > 0 { out += "," }
            WireJSON.appendString(name, to: &out)
            out += ":["
            for (position, delta) in deltas[name]!.enumerated() {
                if position > 0 { out += "," }
                out += "["
                WireJSON.appendString(delta.stamp.description, to: &out)
                out += ","
                WireJSON.appendNumber(delta.amount, to: &out)
                out += "]"
            }
            out += "]"
        }
        return out + "}"
    }

    /// The state a `text` holds; nil when it is not one.
    public init?(text: String) {
        guard text.utf8.count <= Self.maxTextLength, let whole = try? JSONDecoder().decode(Whole.self, from: Data(text.utf8)) else {
            return nil
        }
        var stamps: [String: HLCStamp] = [:]
        for (name, stamp) in whole.s {
            guard let parsed = HLCStamp(parsing: stamp) else { return nil }
            stamps[name] = parsed
        }
        var deltas: [String: [Delta]] = [:]
        for (name, list) in whole.d ?? [:] {
            var parsed: [Delta] = []
            for pair in list {
                guard let stamp = HLCStamp(parsing: pair.stamp), pair.amount.isFinite else { return nil }
                parsed.append(Delta(stamp: stamp, amount: pair.amount))
            }
            deltas[name] = parsed.sorted { $0.stamp < $1.stamp }
        }
        var tombstone: HLCStamp?
        if let text = whole.t {
            guard let parsed = HLCStamp(parsing: text) else { return nil }
            tombstone = parsed
        }
        self.init(stamps: stamps, deltas: deltas, tombstone: tombstone)
    }

    /// The newest stamp the state holds.
    public var newestStamp: HLCStamp? {
        (Array(stamps.values) + deltas.values.compactMap { $0.last?.stamp } + [tombstone].compactMap { $0 }).max()
    }

    /// Whether the record is deleted: a delete beats the edits stamped before it.
    public var isDeleted: Bool {
        guard let tombstone else { return false }
        return stamps.values.allSatisfy { $0 < tombstone } && deltas.values.allSatisfy { ($0.last?.stamp).map { $0 < tombstone } ?? true }
    }

    /// The sum of the deltas of `field` the state holds (those after its last set).
    public func deltaSum(of field: String) -> Double {
        (deltas[field] ?? []).reduce(0) { $0 + $1.amount }
    }

    /// Whether a change with `stamp` of these fields, deltas and deletion is already part of the
    /// state (every field set at or after it, every delta there or overtaken by a later set, the
    /// deletion at or after it).
    public func holds(stamp: HLCStamp, fields: some Sequence<String>, deltas changeDeltas: some Sequence<String>, deleted: Bool) -> Bool {
        for name in fields where (stamps[name].map { $0 < stamp } ?? true) { return false }
        for name in changeDeltas {
            if let set = stamps[name], set >= stamp { continue }
            if !(deltas[name] ?? []).contains(where: { $0.stamp == stamp }) { return false }
        }
        if deleted, tombstone.map({ $0 < stamp }) ?? true { return false }
        return true
    }

    private struct Whole: Decodable {
        let s: [String: String]
        let d: [String: [Pair]]?
        let t: String?
    }

    /// A delta as JSON keeps it: `[stamp, amount]`.
    private struct Pair: Decodable {
        let stamp: String
        let amount: Double

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            stamp = try container.decode(String.self)
            amount = try container.decode(Double.self)
        }
    }
}
