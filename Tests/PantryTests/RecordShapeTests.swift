import EventualAPI
import EventualKit
import Foundation
import GRDB
import Testing
@testable import Pantry

/// The promise: the pantry's item is its collection spelled as a Swift value, and the table its
/// migrations make has a column for each field.
@Suite("The pantry's record holds to its collection and table")
struct RecordShapeTests {
    @Test func anItemHasItsCollectionsFieldsAndItsMigratedTableAColumnForEach() throws {
        // Given the pantry's migrations run on a database file
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let store = try LocalStore(path: scratch.url.appendingPathComponent("pantry.sqlite").path, migrations: PantrySchema.migrations)
        // Then the app's one collection has its record, and it fits its table
        #expect(SyncCollections.pantry.map(\.name) == [PantryItem.collection.name])
        try store.reader.read { db in try PantryItem.checkShape(table: PantrySchema.items.mirror.table, db) }
    }
}
