import EventualAPI
import Foundation
@testable import EventualKit

/// Whose space an item is in: the first person's own, the second's, or the one they share.
enum SoakPlace: String {
    case first, second, shared
}

/// What the people of a fault soak did, in order, to compute what everyone must end up with.
/// Each change is known by its outbox entry: a change the server refused and the person settled
/// by discarding it or taking the server's record applies nowhere; one they kept is stamped
/// again, at the moment they kept it.
struct SoakIntent {
    /// One change of a record a person made, as queued: its outbox entry, what it set (the
    /// quantity apart), what it did to the quantity, or that it deleted the record.
    struct Change {
        var step: Int
        var entry: String
        var fields: [String: SyncValue] = [:]
        var setsQuantity: Double?
        var addsToQuantity: Double?
        var deletes = false
    }

    struct Record {
        var changes: [Change] = []
        var place = SoakPlace.first
    }

    private(set) var records: [String: Record] = [:]
    var step = 0
    var postedBarcodes: [String] = []
    /// The photos taken, by their reference.
    var photos: [AttachmentReference: Data] = [:]
    /// The entries of changes that apply nowhere: refused, and dropped by the person who made them.
    private(set) var dropped: Set<String> = []
    /// The photos (`sha256` in `space`, nil for a person's own) whose refused upload a person gave up.
    var abandonedUploads: Set<String> = []

    static func upload(_ reference: AttachmentReference, in space: String?) -> String { "\(reference.sha256) in \(space ?? "own")" }

    mutating func add(_ id: String, _ fields: [String: SyncValue], in place: SoakPlace, entry: String) {
        set(id, fields, entry: entry)
        records[id]!.place = place
    }

    mutating func set(_ id: String, _ fields: [String: SyncValue], entry: String) {
        step += 1
        var fields = fields
        let quantity = fields.removeValue(forKey: "quantity")?.doubleValue
        records[id, default: Record()].changes.append(Change(step: step, entry: entry, fields: fields, setsQuantity: quantity))
    }

    /// A use of some of an item: a delta of its quantity counter, stamped after every earlier action.
    mutating func consume(_ id: String, _ amount: Double, entry: String) {
        step += 1
        records[id, default: Record()].changes.append(Change(step: step, entry: entry, addsToQuantity: -amount))
    }

    /// An item thrown away: set aside, it takes no edit made without knowing it (`SyncRule.editableWhile`).
    mutating func throwAway(_ id: String, entry: String) {
        step += 1
        records[id, default: Record()].changes.append(Change(step: step, entry: entry, fields: ["status": "thrownAway"]))
    }

    mutating func delete(_ id: String, entry: String) {
        step += 1
        records[id, default: Record()].changes.append(Change(step: step, entry: entry, deletes: true))
    }

    /// The stamp of each change entry seen queued on a device, by entry id (`remember`).
    private var stamps: [String: String] = [:]

    /// Notes the stamp of every change queued in `entries` (a device's outbox), unless it sends
    /// back a whole record's state: an acknowledged change sent back after a restore is a new entry
    /// with the stamp of the one it repeats, and its settling is that change's.
    mutating func remember(_ entries: [OutboxEntry]) {
        for entry in entries where entry.kind == .change && stamps[entry.id] == nil {
            guard let change = try? JSONDecoder().decode(ChangePayload.self, from: entry.payload), change.state == nil else { continue }
            stamps[entry.id] = change.hlc
        }
    }

    /// The record a change of the model's (by its entry) is of.
    private func record(holding entry: String) -> String? {
        records.first { $0.value.changes.contains { $0.entry == entry } }?.key
    }

    /// The entry of the change the model knows that `entry` is, or repeats (sent back after a restore).
    private func original(of entry: String) -> String {
        guard record(holding: entry) == nil, let stamp = stamps[entry] else { return entry }
        return records.values.lazy.flatMap(\.changes).first { $0.entry != entry && stamps[$0.entry] == stamp }?.entry ?? entry
    }

    /// Whether `entry` repeats a change of a record an owner's device held when the server was put
    /// back: that device sent the record back too, so the change holds there whatever its sender does.
    private func repeatsWhatAnOwnerSentBack(_ entry: String, original: String) -> Bool {
        original != entry && record(holding: original).map(heldByOwnerAtPutBack.contains) == true
    }

    /// A refused change dropped by its person (discarded, or the server's record taken instead).
    mutating func drop(_ entry: String) {
        let original = original(of: entry)
        guard !repeatsWhatAnOwnerSentBack(entry, original: original), !madeWhatAnOwnerSentBack(original) else { return }
        dropped.insert(original)
    }

    /// Whether `entry` made, before the server was put back, a record that a device of the owner
    /// held then: the server had applied it (the owner's device pulled it), and that device sent
    /// the record back, so it holds whatever its sender does (seed 769: the sender's own answer
    /// was lost, so its change went again, was refused for its new role and dropped).
    private func madeWhatAnOwnerSentBack(_ entry: String) -> Bool {
        guard let putBackAtStep, let id = record(holding: entry), heldByOwnerAtPutBack.contains(id),
              let made = records[id]?.changes.first, made.entry == entry, made.step <= putBackAtStep else { return false }
        return true
    }

    /// The records a device of the space's owner held when the server was put back to its copy.
    var heldByOwnerAtPutBack: Set<String> = []

    /// The model's step when the server's database was put back to its copy (nil: not yet).
    var putBackAtStep: Int?

    /// A record sent back whole after the restore (its state), refused for its sender's role and
    /// dropped by them: what the sender's device (`node`) did to it before the restore is lost to
    /// the server, unless another device sent it back too, which a device of the owner only does
    /// for a record it holds, and then with its own changes in it.
    mutating func dropSentBack(_ recordID: String, node: String) {
        guard let putBackAtStep, let record = records[recordID], !heldByOwnerAtPutBack.contains(recordID) else { return }
        for change in record.changes where change.step <= putBackAtStep {
            guard let stamp = stamps[change.entry].flatMap(HLCStamp.init(parsing:)), stamp.node == node else { continue }
            dropped.insert(change.entry)
        }
    }

    /// A refused change kept by its person: stamped again now, queued as `queued`, with `edits`
    /// over what it set (an edited quantity is set, no longer added to).
    mutating func keep(_ entry: String, as queued: String, edits: [String: SyncValue]) {
        step += 1
        let repeated = original(of: entry)
        // NB: a change that holds already (`repeatsWhatAnOwnerSentBack`) stays: what is kept is a copy of it, stamped now.
        let copies = repeatsWhatAnOwnerSentBack(entry, original: repeated)
        for (id, record) in records {
            guard let index = record.changes.firstIndex(where: { $0.entry == repeated }) else { continue }
            var change = record.changes[index]
            change.step = step
            change.entry = queued
            var edits = edits
            if let quantity = edits.removeValue(forKey: "quantity")?.doubleValue {
                change.setsQuantity = quantity
                change.addsToQuantity = nil
            }
            change.fields.merge(edits) { $1 }
            if copies { records[id]!.changes.append(change) } else { records[id]!.changes[index] = change }
            return
        }
    }

    func place(of id: String) -> SoakPlace? { records[id]?.place }

    /// The changes of a record that count, in the order they were stamped.
    private func applied(_ record: Record) -> [Change] {
        record.changes.filter { !dropped.contains($0.entry) }.sorted { $0.step < $1.step }
    }

    /// Whether the record is on the server: some change wrote it, and no delete came after the last one.
    private func exists(_ changes: [Change]) -> Bool {
        guard let written = changes.last(where: { !$0.deletes })?.step else { return false }
        return written > (changes.last(where: \.deletes)?.step ?? 0)
    }

    /// A counter as the server merges it: the last quantity set, plus what was added after it.
    private func quantity(_ changes: [Change]) -> Double {
        let lastSet = changes.last { $0.setsQuantity != nil }
        return (lastSet?.setsQuantity ?? 0)
            + changes.filter { $0.step > (lastSet?.step ?? 0) }.compactMap(\.addsToQuantity).reduce(0, +)
    }

    /// Each field as the last change that set it left it.
    private func fields(_ changes: [Change]) -> [String: SyncValue] {
        changes.reduce(into: [:]) { fields, change in fields.merge(change.fields) { $1 } }
    }

    /// What a device of a person who sees `places` must hold.
    func expected(in places: Set<SoakPlace>) -> [Item] {
        records.compactMap { id, record -> Item? in
            let changes = applied(record)
            guard places.contains(record.place), exists(changes) else { return nil }
            let fields = fields(changes)
            return Item(id: id, name: fields["name"]?.stringValue ?? "", quantity: quantity(changes), category: fields["category"]?.stringValue,
                        status: fields["status"]?.stringValue ?? "inPantry")
        }.sorted { $0.id < $1.id }
    }

    /// The brand an item must show: the one its applied changes set last (the pantry's second version).
    func brand(of id: String) -> String? {
        records[id].flatMap { fields(applied($0))["brand"]?.stringValue }
    }

    /// The photo an item must show: the one its applied changes set.
    func photo(of id: String) -> AttachmentReference? {
        records[id].flatMap { fields(applied($0))["photo"]?.stringValue }.flatMap(AttachmentReference.init(parsing:))
    }
}
