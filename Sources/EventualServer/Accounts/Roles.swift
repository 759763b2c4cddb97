import EventualStorage
import Foundation
import SQLKit

/// What a signed-in person may do beyond their own data.
public enum UserRole: String, Sendable, CaseIterable {
    /// Everyone: their own records, the knowledge base, the apps' public data.
    case user
    /// The product team: analytics, the dashboard, offers attached to shops.
    case admin
}

extension AccountStore {
    /// The role of a user; a user who no longer exists has none.
    func role(userID: String) async throws -> UserRole? {
        try await database.withConnection { sql in
            guard let row = try await sql.select().column("role").from("users").where("id", .equal, userID).first() else {
                return nil
            }
            // NB: an unknown value (written by a newer server) grants nothing.
            return UserRole(rawValue: try row.decode(column: "role", as: String.self)) ?? .user
        }
    }
}

extension APIService {
    static let adminsOnly = APIError.forbidden("Only the product team can do this: an admin is made with 'eventual-server user grant-admin EMAIL'")

    /// The signed-in user's id if they are an admin; a 401 without a valid token, a 403 otherwise.
    func authenticatedAdminID() async throws -> String {
        let userID = try await authenticatedUserID()
        guard try await accounts.role(userID: userID) == .admin else { throw Self.adminsOnly }
        return userID
    }
}

/// Grants and revokes roles, for the `eventual-server user` commands.
public struct RoleAdministration: Sendable {
    let database: Database

    public init(database: Database) { self.database = database }

    /// Sets the role of the account with this email; false when there is no such account.
    public func set(_ role: UserRole, email: String) async throws -> Bool {
        try await database.withConnection { sql in
            let key = AccountRules.key(email)
            guard try await sql.select().column("id").from("users").where("email_key", .equal, key).first() != nil else {
                return false
            }
            try await sql.update("users").set("role", to: role.rawValue).where("email_key", .equal, key).run()
            return true
        }
    }

    /// The emails of every admin, in alphabetical order.
    public func admins() async throws -> [String] {
        try await database.withConnection { sql in
            try await sql.select().column("email").from("users").where("role", .equal, UserRole.admin.rawValue)
                .orderBy("email_key").all().map { try $0.decode(column: "email", as: String.self) }
        }
    }
}
