import Foundation
import SQLKit

/// A consistent copy of a live SQLite database, made while the server runs.
///
/// NB: `VACUUM INTO` reads the database in one read transaction, so the copy is the state of one
/// moment, and in WAL mode the server's writes go on meanwhile. The copy is written beside the
/// target and moved into place only once whole: a full disk or a stop half-way leaves no file
/// that looks like a backup.
public enum SQLiteBackup {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notSQLite
        case targetExists(String)
        case cannotWrite(String, reason: String)

        public var description: String {
            switch self {
            case .notSQLite:
                return "backup copies an SQLite database; on PostgreSQL use pg_dump or a base backup (see docs/server.md)"
            case .targetExists(let path): return "\(path) exists already: name a new file, or remove it first"
            case .cannotWrite(let path, let reason): return "cannot write the backup to \(path): \(reason); nothing was written"
            }
        }
    }

    /// Copies `database` to `target` (a new file), and returns how many bytes the copy holds.
    public static func copy(_ database: Database, to target: String) async throws -> Int64 {
        guard database.dialect == .sqlite else { throw Failure.notSQLite }
        let files = FileManager.default
        guard !files.fileExists(atPath: target) else { throw Failure.targetExists(target) }
        let folder = (target as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        guard files.fileExists(atPath: folder.isEmpty ? "." : folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw Failure.cannotWrite(target, reason: "no such folder")
        }
        let partial = target + ".partial-\(ProcessInfo.processInfo.processIdentifier)"
        try? files.removeItem(atPath: partial)
        do {
            try await database.withConnection { sql in try await sql.raw("VACUUM INTO \(bind: partial)").run() }
        } catch {
            try? files.removeItem(atPath: partial)
            throw Failure.cannotWrite(target, reason: Self.reason(error))
        }
        do {
            try files.moveItem(atPath: partial, toPath: target)
        } catch {
            try? files.removeItem(atPath: partial)
            throw Failure.cannotWrite(target, reason: "the finished copy could not be moved into place")
        }
        return (try? files.attributesOfItem(atPath: target)[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// SQLite's words for why a copy failed, as a person reads them.
    private static func reason(_ error: any Error) -> String {
        let text = "\(error)".lowercased()
        if text.contains("full") { return "the disk is full" }
        if text.contains("readonly") || text.contains("permission") || text.contains("unable to open") { return "the file cannot be created there" }
        return "SQLite refused (\(String(describing: error).prefix(120)))"
    }
}
