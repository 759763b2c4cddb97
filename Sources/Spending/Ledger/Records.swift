import EventualAPI
import EventualKit
import Foundation
import GRDB

/// What kind of place money is kept in.
public enum AccountKind: String, Sendable, Codable, CaseIterable, DatabaseValueConvertible {
    case cash, bank, card, savings

    /// A kind this version does not know (a newer app's) is read as cash.
    public init(from decoder: any Decoder) throws {
        self = AccountKind(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .cash
    }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> AccountKind? {
        String.fromDatabaseValue(value).map { AccountKind(rawValue: $0) ?? .cash }
    }
}

/// Which way money moved.
public enum TransactionKind: String, Sendable, Codable, CaseIterable {
    case expense, income, transfer
}

/// One side of a transfer between an account of one space and an account of another (a person's
/// own and a shared one): two linked records, each in its account's space, so that each space's
/// members see their account's side and a balance never depends on a space one is not in.
public enum TransferLeg: String, Sendable, Codable {
    /// Takes the money from `accountId`; in that account's space.
    case out
    /// Brings the money to `toAccountId`; in that account's space.
    case `in`
}

/// An account: a row of `spending_accounts`, synced as the `spending_accounts` collection (its
/// properties are the fields: `SyncRecord`).
public struct SpendingAccount: SyncRecord, Equatable, Identifiable {
    public static let collection = SyncCollections.spendingAccounts

    public var id: String
    public var name: String
    public var kind: AccountKind
    public var currency: String
    public var colour: String?
    public var openingBalanceMinor: Int64
    public var archived: Bool
    /// Unix milliseconds.
    public var createdAt: Int64
    /// The shared space it is in; nil for the person's own.
    public var space: String?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id, name, kind, currency, colour, openingBalanceMinor, archived, createdAt
        /// The row's column the engine writes: not a field, never sent.
        case space = "space_id"
    }

    init(id: String, name: String, kind: AccountKind, currency: String, colour: String?, openingBalanceMinor: Int64, createdAt: Int64) {
        self.id = id
        self.name = name
        self.kind = kind
        self.currency = currency
        self.colour = colour
        self.openingBalanceMinor = openingBalanceMinor
        archived = false
        self.createdAt = createdAt
    }
}

/// Money spent, received or moved: a row of `spending_transactions`, synced as `spending_transactions`.
public struct SpendingTransaction: Sendable, Equatable, Codable, FetchableRecord, Identifiable {
    public var id: String
    public var accountId: String
    public var kind: TransactionKind
    /// Above zero; the kind says which way it goes.
    public var amountMinor: Int64
    public var currency: String
    public var category: String?
    public var note: String?
    /// Unix milliseconds.
    public var occurredAt: Int64
    public var place: String?
    public var latitude: Double?
    public var longitude: Double?
    /// Imported from a bank's export.
    public var automatic: Bool
    /// For a transfer: where the money went.
    public var toAccountId: String?
    /// The space it is in (its account's); nil for the person's own.
    public var space: String?
    /// The username of who last changed it, as the server applied it; nil while this device's own change waits.
    public var changedBy: String?
    /// Its receipt's photo: an attachment's reference (`sha256:<digest>`); nil: none.
    public var receipt: String? = nil
    /// For one side of a transfer between spaces: which side, and the id of the other; nil for a whole record.
    public var leg: TransferLeg? = nil
    public var linkId: String? = nil

    public init(row: Row) throws {
        id = row["id"]
        space = row["space_id"]
        changedBy = row["changed_by"]
        receipt = row["receipt"]
        accountId = row["accountId"]
        kind = TransactionKind(rawValue: row["kind"] ?? "") ?? .expense
        amountMinor = row["amountMinor"]
        currency = row["currency"]
        category = row["category"]
        note = row["note"]
        occurredAt = row["occurredAt"]
        place = row["place"]
        latitude = row["latitude"]
        longitude = row["longitude"]
        automatic = row["automatic"]
        toAccountId = row["toAccountId"]
        leg = (row["leg"] as String?).flatMap(TransferLeg.init(rawValue:))
        linkId = row["linkId"]
    }

    init(id: String, accountId: String, kind: TransactionKind, amountMinor: Int64, currency: String, category: String?, note: String?,
         occurredAt: Int64, place: String?, position: GeoPosition?, automatic: Bool, toAccountId: String?) {
        self.id = id
        self.accountId = accountId
        self.kind = kind
        self.amountMinor = amountMinor
        self.currency = currency
        self.category = category
        self.note = note
        self.occurredAt = occurredAt
        self.place = place
        latitude = position?.latitude
        longitude = position?.longitude
        self.automatic = automatic
        self.toAccountId = toAccountId
    }

    /// The amount with its currency.
    public var money: Money { Money(minorUnits: amountMinor, currency: currency) }

    var syncFields: [String: SyncValue] {
        ["accountId": .string(accountId), "kind": .string(kind.rawValue), "amountMinor": .integer(amountMinor),
         "currency": .string(currency), "category": .string(category), "note": .string(note), "occurredAt": .integer(occurredAt),
         "place": .string(place), "latitude": .number(latitude), "longitude": .number(longitude),
         "automatic": .boolean(automatic), "toAccountId": .string(toAccountId)]
            // NB: only on a transfer's side: a whole record's changes stay as short as before.
            .merging(leg.map { ["leg": .string($0.rawValue), "linkId": .string(linkId)] } ?? [:]) { $1 }
    }

    /// The other side of this one, as a transfer between spaces makes it: the same money, the other leg.
    func otherLeg(id: String) -> SpendingTransaction {
        var other = self
        other.id = id
        other.leg = leg == .out ? .in : .out
        other.linkId = self.id
        other.receipt = nil
        return other
    }
}

/// Categories are free text; these are offered first.
public enum Categories {
    public static let defaults = ["food", "transport", "housing", "health", "leisure", "education", "shopping", "income", "other"]

    /// Trimmed and lower-cased, so "Food " and "food" are one category.
    static func normalized(_ text: String?) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }
}
