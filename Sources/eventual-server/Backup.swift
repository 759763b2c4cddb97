import ArgumentParser
import EventualAPI
import EventualStorage
import Foundation

/// `eventual-server backup FILE`: a consistent copy of the SQLite database, made while the server runs.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the SQLite database to a new file while the server runs.",
        discussion: """
            The copy is one consistent moment of the database, made with SQLite's VACUUM INTO; the server \
            keeps serving meanwhile. To restore, stop the server, put the copy in place of the database \
            file (and remove its -wal and -shm files), and start it: devices notice that the server went \
            back in time and send back what it lost (docs/server.md). On PostgreSQL use pg_dump or a base \
            backup instead.
            """
    )

    @Argument(help: "The new file to write the copy to (it must not exist).")
    var file: String

    @OptionGroup var database: DatabaseOption

    func run() async throws {
        guard case .sqlite(let path) = database.location else { throw ImportFailure(message: SQLiteBackup.Failure.notSQLite.description) }
        // NB: checked before opening, so that a mistyped path creates no database.
        try requireReadable(path)
        FileHandle.standardError.write(Data("Copying \(path) to \(file)…\n".utf8))
        let started = ContinuousClock.now
        let bytes = try await withDatabase(database) { opened in
            do {
                return try await SQLiteBackup.copy(opened, to: file)
            } catch let failure as SQLiteBackup.Failure {
                throw ImportFailure(message: failure.description)
            }
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("Backed up \(path) to \(file): \(ByteCount.text(bytes)) in \(String(format: "%.1f", seconds)) s.")
    }
}
