import EventualAPI
import EventualStorage
import Foundation

/// The merged state of one synced record: each field's value with the stamp of the change that
/// set it, the deltas added to its counter fields since their last set, and the stamp of its
/// newest delete.
///
/// Merging is per field, last writer wins by HLC stamp, so the order in which changes arrive
/// does not matter: every device that has seen the same changes holds the same state. A counter
/// field adds up every delta once (change ids make delivery exactly-once); an explicit set of it
/// wins over the deltas stamped before the set and keeps those stamped after it.
struct SyncRecordState: Sendable, Equatable {
    var fields: [String: SyncValue] = [:]
    /// The stamp of the change that last set each field.
    var stamps: [String: HLCStamp] = [:]
    /// Per counter field, the deltas stamped after its last set, in stamp order.
    var deltas: [String: [CounterDelta]] = [:]
    var tombstone: HLCStamp?

    /// One amount added to a counter.
    struct CounterDelta: Sendable, Equatable {
        let stamp: HLCStamp
        let amount: Double
    }

    /// Merges a change in; false when it lost every comparison and changed nothing.
    mutating func apply(_ change: ValidatedChange) -> Bool {
        var changed = false
        for (name, value) in change.fields {
            if let stored = stamps[name], stored >= change.stamp { continue }
            stamps[name] = change.stamp
            let kept = (deltas[name] ?? []).filter { $0.stamp > change.stamp }
            deltas[name] = kept.isEmpty ? nil : kept
            fields[name] = kept.isEmpty ? value : Self.adding(kept.map(\.amount), to: value)
            changed = true
        }
        for (name, amount) in change.deltas {
            // NB: a set stamped after this delta already says what the person saw and meant.
            if let set = stamps[name], set >= change.stamp { continue }
            var list = deltas[name] ?? []
            guard !list.contains(where: { $0.stamp == change.stamp }) else { continue }
            list.append(CounterDelta(stamp: change.stamp, amount: amount))
            list.sort { $0.stamp < $1.stamp }
            deltas[name] = list
            fields[name] = Self.adding([amount], to: fields[name] ?? .null)
            changed = true
        }
        if change.deleted, tombstone.map({ $0 < change.stamp }) ?? true {
            tombstone = change.stamp
            changed = true
        }
        if change.creates, stamps[Self.madeKey].map({ $0 < change.stamp }) ?? true {
            stamps[Self.madeKey] = change.stamp
            changed = true
        }
        if changed { clearWhatCameBeforeItWasMadeAgain() }
        return changed
    }

    /// In a collection whose deletion is final (`SyncCollection.deletionIsFinal`): a delete of the
    /// record as it was made last beats the edits stamped after it, which reached the server
    /// before it (an edit that reaches it after is refused: `PushMerge`). The tombstone then moves
    /// just past the newest of them. False when nothing changed.
    /// NB: a function of the state and the change, so two servers that merge the same changes end
    /// equal; a delete stamped before the record was made again deletes only what it saw.
    mutating func makeFinal(_ change: ValidatedChange) -> Bool {
        guard change.deleted, !isDeleted, let newest = newestStamp,
              stamps[Self.madeKey].map({ $0 < change.stamp }) ?? true else { return false }
        tombstone = newest.counter < HLCStamp.maxCounter
            ? HLCStamp(millis: newest.millis, counter: newest.counter + 1, node: newest.node)
            : HLCStamp(millis: newest.millis + 1, counter: 0, node: newest.node)
        return true
    }

    /// Where `stamps` keeps the stamp of the newest change that made the record (a device's
    /// insert): no field is ever named so.
    static let madeKey = MergeState.madeKey

    /// A record made again after its deletion starts clean: what was set or added before the
    /// deletion is empty (a counter counts from what was added after it). NB: a function of the
    /// newest make and the newest delete, so the order changes arrive in does not matter: an edit
    /// older than the delete that arrives after the record was made again is cleared too.
    private mutating func clearWhatCameBeforeItWasMadeAgain() {
        guard let made = stamps[Self.madeKey], let tombstone, tombstone < made else { return }
        for name in Set(stamps.keys).union(deltas.keys) where name != Self.madeKey {
            let setBefore = stamps[name].map { $0 < tombstone } ?? true
            let list = deltas[name] ?? []
            let after = list.filter { $0.stamp > tombstone }
            if after.count != list.count { deltas[name] = after.isEmpty ? nil : after }
            guard setBefore, fields[name] != nil else { continue }
            fields[name] = after.isEmpty ? .null : Self.adding(after.map(\.amount), to: .null)
        }
    }

    /// Merges a record sent back after a restore (`ValidatedChange.restoredState`), stamp by stamp:
    /// each field set at the stamp the state gives it (a counter at its value less the deltas that
    /// followed the set), then each delta, then the delete. The same state merged twice, or two
    /// devices' states of one record, end as the record was merged before. False when nothing changed.
    mutating func restore(_ change: ValidatedChange, counters: Set<String>) -> Bool {
        guard let merge = change.restoredState else { return apply(change) }
        var changed = false
        let byStamp = Dictionary(grouping: change.fields.keys.filter { merge.stamps[$0] != nil }) { merge.stamps[$0]! }
        for (stamp, names) in byStamp.sorted(by: { $0.key < $1.key }) {
            var fields: [String: SyncValue] = [:]
            for name in names {
                let value = change.fields[name]!
                let after = merge.deltaSum(of: name)
                fields[name] = counters.contains(name) && after != 0
                    ? (Self.adding([-after], to: value)) : value
            }
            changed = apply(ValidatedChange(collection: change.collection, recordID: change.recordID, stamp: stamp, fields: fields,
                                            deltas: [:], deleted: false)) || changed
        }
        for (name, list) in merge.deltas.sorted(by: { $0.key < $1.key }) {
            for delta in list {
                changed = apply(ValidatedChange(collection: change.collection, recordID: change.recordID, stamp: delta.stamp, fields: [:],
                                                deltas: [name: delta.amount], deleted: false)) || changed
            }
        }
        if let tombstone = merge.tombstone {
            changed = apply(ValidatedChange(collection: change.collection, recordID: change.recordID, stamp: tombstone, fields: [:],
                                            deltas: [:], deleted: true)) || changed
        }
        if let made = merge.stamps[Self.madeKey] {
            var making = ValidatedChange(collection: change.collection, recordID: change.recordID, stamp: made, fields: [:],
                                         deltas: [:], deleted: false)
            making.creates = true
            changed = apply(making) || changed
        }
        return changed
    }

    /// A delete beats the edits stamped before it; an edit stamped after it brings the record back.
    var isDeleted: Bool {
        guard let tombstone else { return false }
        return editStamps.allSatisfy { $0 < tombstone }
    }

    /// The newest stamp the record holds (nil only for a record nothing was ever merged into).
    var newestStamp: HLCStamp? {
        ([tombstone].compactMap { $0 } + editStamps).max()
    }

    private var editStamps: [HLCStamp] {
        Array(stamps.values) + deltas.values.compactMap { $0.last?.stamp }
    }

    /// `value` plus the amounts; a counter never set counts from zero.
    private static func adding(_ amounts: [Double], to value: SyncValue) -> SyncValue {
        let total = amounts.reduce(value.doubleValue ?? 0, +)
        return Int64(exactly: total).map(SyncValue.integer) ?? .number(total)
    }
}

extension SyncRecordState {
    /// What the merge keeps beside the fields, as a pull sends it.
    var merge: MergeState {
        MergeState(stamps: stamps, deltas: deltas.mapValues { $0.map { MergeState.Delta(stamp: $0.stamp, amount: $0.amount) } },
                   tombstone: tombstone)
    }
}

extension SyncRecordState {
    /// The state as stored in `sync_records`: `fields`, `field_stamps` and `counter_deltas` as JSON objects.
    struct Columns: Sendable {
        let fields: String
        let fieldStamps: String
        let counterDeltas: String?
        let tombstone: String?
    }

    init(_ columns: Columns) throws {
        let decoder = JSONDecoder()
        // NB: a stored row that does not decode is the server's failure (a 500, retried), never
        // the DecodingError that the error mapping answers as the client's mistake (a 400).
        do {
            fields = try decoder.decode([String: SyncValue].self, from: Data(columns.fields.utf8))
            let stampTexts = try decoder.decode([String: String].self, from: Data(columns.fieldStamps.utf8))
            stamps = try stampTexts.mapValues(Self.stamp)
            if let text = columns.counterDeltas {
                let stored = try decoder.decode([String: [StoredDelta]].self, from: Data(text.utf8))
                deltas = try stored.mapValues { list in
                    try list.map { CounterDelta(stamp: try Self.stamp($0.hlc), amount: $0.amount) }
                }
            }
        } catch is DecodingError {
            throw StorageError.corrupt("a sync record's fields, stamps or deltas are not the JSON the server writes")
        }
        if let text = columns.tombstone {
            tombstone = try Self.stamp(text)
        }
    }

    func columns() throws -> Columns {
        let counterDeltas = MergeState.deltasText(merge.deltas)
        return Columns(
            fields: WireJSON.object(fields),
            fieldStamps: WireJSON.object(stamps.mapValues(\.description)),
            counterDeltas: counterDeltas,
            tombstone: tombstone?.description
        )
    }

    /// The fields alone, as a pull sends them.
    static func fields(of columns: Columns) throws -> [String: SyncValue] {
        do {
            return try JSONDecoder().decode([String: SyncValue].self, from: Data(columns.fields.utf8))
        } catch is DecodingError {
            throw StorageError.corrupt("a sync record's fields are not the JSON the server writes")
        }
    }

    /// The newest stamp in stored JSON columns (`field_stamps`, `counter_deltas`), without decoding
    /// them: every string in them that reads as a stamp (field names never do: a stamp is 13 digits, a dash, 5 digits, a dash and a node).
    static func newestStamp(in texts: [String?]) -> HLCStamp? {
        var newest: HLCStamp?
        for case let text? in texts {
            let bytes = Array(text.utf8)
            var index = 0
            while index < bytes.count {
                guard bytes[index] == UInt8(ascii: "\"") else { index += 1; continue }
                var end = index + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\") { end += 1 }
                // NB: a string with an escape is no stamp; skip past it.
                if end < bytes.count, bytes[end] == UInt8(ascii: "\\") {
                    index = end + 2
                    continue
                }
                if end - index - 1 >= 21, let stamp = HLCStamp(parsing: String(decoding: bytes[(index + 1)..<end], as: UTF8.self)),
                   newest.map({ $0 < stamp }) ?? true {
                    newest = stamp
                }
                index = end + 1
            }
        }
        return newest
    }

    /// A delta as JSON keeps it: `[stamp, amount]`.
    private struct StoredDelta: Decodable {
        let hlc: String
        let amount: Double

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            hlc = try container.decode(String.self)
            amount = try container.decode(Double.self)
        }

    }

    private static func stamp(_ text: String) throws -> HLCStamp {
        guard let stamp = HLCStamp(parsing: text) else { throw StorageError.corrupt("a sync record has the stamp '\(text)'") }
        return stamp
    }
}
