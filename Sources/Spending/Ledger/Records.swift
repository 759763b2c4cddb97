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
public enum TransactionKind: String, Sendable, Codable, CaseIterable, DatabaseValueConvertible {
    case expense, income, transfer

    /// A kind this version does not know (a newer app's) is read as an expense.
    public init(from decoder: any Decoder) throws {
        self = TransactionKind(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .expense
    }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> TransactionKind? {
        String.fromDatabaseValue(value).map { TransactionKind(rawValue: $0) ?? .expense }
    }
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

extension KeyedDecodingContainer {
    /// A side this version does not know (a newer app's) is read as none: the record is a whole transfer.
    /// NB: chosen over the generic `decodeIfPresent` where a record's `TransferLeg?` decodes (a row, a change).
    func decodeIfPresent(_ type: TransferLeg.Type, forKey key: Key) throws -> TransferLeg? {
        try decodeIfPresent(String.self, forKey: key).flatMap(TransferLeg.init(rawValue:))
    }
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

/// Money spent, received or moved: a row of `spending_transactions`, synced as the
/// `spending_transactions` collection (its properties are the fields: `SyncRecord`).
public struct SpendingTransaction: SyncRecord, Equatable, Identifiable {
    public static let collection = SyncCollections.spendingTransactions

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

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id, accountId, kind, amountMinor, currency, category, note, occurredAt, place, latitude, longitude, automatic
        case toAccountId, receipt, leg, linkId
        /// The row's columns the engine writes: not fields, never sent.
        case space = "space_id", changedBy = "changed_by"
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
    public static func normalized(_ text: String?) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }
}
