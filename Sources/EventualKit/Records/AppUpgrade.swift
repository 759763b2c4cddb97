import EventualAPI
import GRDB
import Logging

extension SyncEngine {
    /// What a new version of the app needs of this device's tables before anything reads them, in
    /// one transaction: a column for each field added since (`TableMirror.addMissingColumns`),
    /// and the values kept for it while this device ran an earlier version (`KeptFields.fold`).
    /// With no network; run each time the engine is made, it finds nothing to do the second time,
    /// and a process killed before it commits runs it again whole at the next start.
    ///
    /// A device that pulled before it kept (`KeptFields.fieldsToBackFill`) has no values of the
    /// fields added since: their back fill is queued with the subscriptions in the same
    /// transaction, to run at the next sync, with no cursor reset.
    static func upgrade(_ mirrors: [TableMirror], subscriptions: [SyncSubscription], in store: LocalStore, logger: Logger) {
        guard !mirrors.isEmpty else { return }
        do {
            // NB: a read first: most starts have nothing to take up, and a write transaction at
            // every start would wait on another process that holds the writer (`watch`).
            let needed = try store.reader.read { db in
                try KeptFields.gapIsUnrecorded(db)
                    || mirrors.contains { mirror in try mirror.lacksColumns(db) || KeptFields.holds(mirror.collection.name, db) }
            }
            guard needed else { return }
            let (added, folded, filled) = try store.writer.write { db in
                var added: [String] = [], folded = 0
                let filled = try KeptFields.fieldsToBackFill(mirrors, db)
                for mirror in mirrors {
                    added += try mirror.addMissingColumns(db).map { "\(mirror.table).\($0)" }
                    folded += try KeptFields.fold(into: mirror, db)
                }
                try SubscriptionTable.queueFieldFills(filled, subscriptions: subscriptions, db: db)
                return (added, folded, filled)
            }
            if !added.isEmpty || folded > 0 || !filled.isEmpty {
                logger.notice("the app's new version took up its tables", metadata: [
                    "columns": "\(added)", "recordsFolded": "\(folded)", "backFilled": "\(filled.sorted { $0.key < $1.key })"])
            }
        } catch {
            // NB: nothing was changed (one transaction); the kept values stay kept for the next start.
            logger.error("the app's new version could not take up its tables", metadata: ["error": "\(error)"])
        }
    }
}
