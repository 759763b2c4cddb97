import EventualAPI
import Foundation

/// The merged state of one synced record: each field's value with the stamp of the change that
/// wrote it, and the stamp of its newest delete.
///
/// Merging is per field, last writer wins by HLC stamp, so the order in which changes arrive
/// does not matter: every device that has seen the same changes holds the same state.
struct SyncRecordState: Sendable, Equatable {
    var fields: [String: SyncValue] = [:]
    var stamps: [String: HLCStamp] = [:]
    var tombstone: HLCStamp?

    /// Merges a change in; false when it lost every comparison and changed nothing.
    mutating func apply(_ change: ValidatedChange) -> Bool {
        var changed = false
        for (name, value) in change.fields {
            if let stored = stamps[name], stored >= change.stamp { continue }
            fields[name] = value
            stamps[name] = change.stamp
            changed = true
        }
        if change.deleted, tombstone.map({ $0 < change.stamp }) ?? true {
            tombstone = change.stamp
            changed = true
        }
        return changed
    }

    /// A delete beats the edits stamped before it; an edit stamped after it brings the record back.
    var isDeleted: Bool {
        guard let tombstone else { return false }
        return stamps.values.allSatisfy { $0 < tombstone }
    }

    /// The newest stamp the record holds (nil only for a record nothing was ever merged into).
    var newestStamp: HLCStamp? {
        ([tombstone].compactMap { $0 } + stamps.values).max()
    }
}

extension SyncRecordState {
    /// The state as stored in `sync_records`: `fields` and `field_stamps` as JSON objects.
    struct Columns: Sendable {
        let fields: String
        let fieldStamps: String
        let tombstone: String?
    }

    init(_ columns: Columns) throws {
        let decoder = JSONDecoder()
        fields = try decoder.decode([String: SyncValue].self, from: Data(columns.fields.utf8))
        let stampTexts = try decoder.decode([String: String].self, from: Data(columns.fieldStamps.utf8))
        stamps = try stampTexts.mapValues { text in
            guard let stamp = HLCStamp(parsing: text) else { throw StorageError.corrupt("a sync record has the stamp '\(text)'") }
            return stamp
        }
        if let text = columns.tombstone {
            guard let stamp = HLCStamp(parsing: text) else { throw StorageError.corrupt("a sync record has the tombstone '\(text)'") }
            tombstone = stamp
        }
    }

    func columns() throws -> Columns {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Columns(
            fields: String(decoding: try encoder.encode(fields), as: UTF8.self),
            fieldStamps: String(decoding: try encoder.encode(stamps.mapValues(\.description)), as: UTF8.self),
            tombstone: tombstone?.description
        )
    }
}
