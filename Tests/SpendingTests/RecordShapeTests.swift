import EventualAPI
import EventualKit
import Foundation
import GRDB
import Testing
@testable import Spending

/// The promise: each of SpendiQ's record types is its collection spelled as a Swift value (a
/// coding key per field, nothing else but the engine's columns), and the tables its migrations
/// make have a column for each.
@Suite("SpendiQ's records hold to their collections and tables")
struct RecordShapeTests {
    @Test func everyRecordHasItsCollectionsFieldsAndItsMigratedTableAColumnForEach() throws {
        // Given SpendiQ's migrations run on a database file
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let store = try LocalStore(path: scratch.url.appendingPathComponent("spending.sqlite").path, migrations: SpendingSchema.migrations)
        let records: [(record: any SyncRecord.Type, table: String)] = [
            (SpendingAccount.self, SpendingSchema.accounts.mirror.table),
            (SpendingTransaction.self, SpendingSchema.transactions.mirror.table),
            (SpendingLimit.self, SpendingSchema.limits.mirror.table),
        ]
        // Then every collection of the app has its record, and each record fits its table
        #expect(Set(records.map { $0.record.collection.name }) == Set(SyncCollections.spending.map(\.name)))
        try store.reader.read { db in
            for (record, table) in records { try record.checkShape(table: table, db) }
        }
    }
}
