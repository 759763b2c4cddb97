import ArgumentParser
import EventualServer
import Foundation

/// `eventual-server records ...`: an operator's fix of one synced record, through the sync path.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "records",
        abstract: "Show, edit or delete one synced record (a wrong price, a spam item) so that every device hears of it.",
        discussion: """
            The change goes through the sync path: merged as a push is, with a new seq in its space, so every \
            member's devices receive it at their next sync (with PostgreSQL, running servers signal it live). It is \
            filed as the space owner's change. SQL written around this command changes no seq: no device would \
            ever receive it. A person's own space has their user id.
            """,
        subcommands: [Show.self, Edit.self, Delete.self]
    )

    /// Which record: its space, its collection and its id.
    struct Place: ParsableArguments {
        @Argument(help: "The space's id (a person's own space: their user id).")
        var space: String
        @Argument(help: "The collection, e.g. pantry_items or spending_transactions.")
        var collection: String
        @Argument(help: "The record's id.")
        var id: String
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Print the record as JSON, as a pull would send it.")
        @OptionGroup var place: Place
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            print(try await records(database) { try await $0.show(space: place.space, collection: place.collection, recordID: place.id) })
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "edit", abstract: "Set fields of the record: FIELD=VALUE (null clears one).")
        @OptionGroup var place: Place
        @Argument(help: "FIELD=VALUE, one or more (text as typed, numbers, true or false, null).")
        var values: [String]
        @OptionGroup var database: DatabaseOption

        func validate() throws {
            guard !values.isEmpty else { throw ValidationError("name at least one FIELD=VALUE to set") }
            for value in values where !value.contains("=") || value.hasPrefix("=") {
                throw ValidationError("'\(value)' is not FIELD=VALUE")
            }
        }

        func run() async throws {
            var fields: [String: String] = [:]
            for value in values {
                let parts = value.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                fields[String(parts[0])] = String(parts[1])
            }
            let values = fields
            print(try await records(database) { try await $0.set(space: place.space, collection: place.collection, recordID: place.id, values: values) })
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete the record on every device of the space's members.")
        @OptionGroup var place: Place
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            try await records(database) { try await $0.delete(space: place.space, collection: place.collection, recordID: place.id) }
            print("Deleted \(place.collection) \(place.id) in \(place.space): every member's devices remove it at their next sync.")
        }
    }
}

/// Runs `body` on the database's records; a failure is one line.
@discardableResult
private func records<T: Sendable>(_ option: DatabaseOption, _ body: @Sendable (OperatorRecords) async throws -> T) async throws -> T {
    try await withDatabase(option) { database in
        do {
            let apps = DeployedApps(database: database, logger: quietLogger)
            try await apps.deployBuiltIns()
            return try await body(OperatorRecords(database: database, catalog: AppCatalog(try await apps.current())))
        } catch let failure as OperatorRecords.Failure {
            throw ImportFailure(message: failure.description)
        }
    }
}
