import Foundation
import GRDB
import Testing

/// A device's first sync left unfinished, as a connection lost while records arrive leaves it:
/// its subscriptions of `priority` and after say `received` of `total` records came.
public enum UnfinishedFirstSync {
    /// Marks the first sync of the device whose data is in `dataDirectory` as under way.
    public static func leave(in dataDirectory: URL, fromPriority priority: Int = 0, received: Int, total: Int) async throws {
        let store = try #require(FileManager.default.enumerator(atPath: dataDirectory.path)?
            .compactMap { $0 as? String }.first { $0.hasSuffix(".sqlite") }, "no store under \(dataDirectory.path)")
        let queue = try DatabaseQueue(path: dataDirectory.appendingPathComponent(store).path)
        let changed = try await queue.write { db in
            try db.execute(sql: "UPDATE eventual_subscriptions SET complete = 0, received = ?, total = ? WHERE priority >= ?",
                           arguments: [received, total, priority])
            return db.changesCount
        }
        try #require(changed > 0, "the device has no subscription of priority \(priority) or after")
    }
}
