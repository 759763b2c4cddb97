import ArgumentParser
import EventualServer
import Foundation
import Logging

/// `eventual-server user ...`: roles of existing accounts, run by whoever runs the server.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Manage the roles of existing accounts (admins read analytics and attach offers).",
        subcommands: [GrantAdmin.self, RevokeAdmin.self, ListAdmins.self]
    )

    struct GrantAdmin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "grant-admin", abstract: "Make the account with this email an admin.")

        @Argument(help: "The email the account was registered with.")
        var email: String

        @OptionGroup var database: DatabaseOption

        func run() async throws {
            try await setRole(.admin, email: email, database: database)
            print("\(email) is an admin")
        }
    }

    struct RevokeAdmin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-admin", abstract: "Make the account with this email an ordinary user again.")

        @Argument(help: "The email the account was registered with.")
        var email: String

        @OptionGroup var database: DatabaseOption

        func run() async throws {
            try await setRole(.user, email: email, database: database)
            print("\(email) is no longer an admin")
        }
    }

    struct ListAdmins: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "admins", abstract: "List the admins' emails.")

        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let emails = try await withDatabase(database) { try await RoleAdministration(database: $0).admins() }
            print(emails.isEmpty ? "no admins yet: eventual-server user grant-admin EMAIL" : emails.joined(separator: "\n"))
        }
    }
}

private func setRole(_ role: UserRole, email: String, database: DatabaseOption) async throws {
    let found = try await withDatabase(database) { try await RoleAdministration(database: $0).set(role, email: email) }
    guard found else { throw ImportFailure(message: "no account is registered with \(email)") }
}
