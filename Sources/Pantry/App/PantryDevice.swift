import EventualAPI
import EventualKit
import Foundation
import GRDB

extension DeviceApp {
    /// The pantry to the device layer: its tables, and its words for what waits in the outbox.
    static let pantry = DeviceApp(.pantry, version: UserPantry.version, migrations: PantrySchema.migrations,
                                  spaceNoun: "household", recordName: { _, id, store in
        try store.reader.read { db in try String.fetchOne(db, sql: "SELECT name FROM pantry_items WHERE id = ?", arguments: [id]) }
            .map { "item \($0)" }
    }) { entry, store in
        switch entry.kind {
        case .change:
            let name = try store.reader.read { db in
                try String.fetchOne(db, sql: "SELECT name FROM pantry_items WHERE id = ?", arguments: [entry.recordID ?? ""])
            }
            // NB: the end of a UUIDv7 tells items apart; its start is the minute it was made, the same for many.
            return "item \(name ?? String((entry.recordID ?? "?").suffix(OutboxEntry.shortIDLength)))"
        case .call:
            if let post = try? JSONDecoder().decode(PostProductCall.self, from: entry.payload), entry.operation == KnowledgeBaseCalls.postProduct {
                return "new product \(post.name) (\((try? GTIN(post.barcode).shortForm) ?? post.barcode))"
            } else if let vote = try? JSONDecoder().decode(VoteCall.self, from: entry.payload) {
                return "vote \(vote.rating > 0 ? "+" : "")\(vote.rating) on a product of \((try? GTIN(vote.barcode).shortForm) ?? vote.barcode)"
            }
            return entry.operation
        }
    }
}
