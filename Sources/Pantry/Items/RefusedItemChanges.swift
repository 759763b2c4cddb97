import EventualAPI
import EventualKit
import Foundation

/// The changes to items the server refused, and how a person settles each.
extension UserPantry {
    /// The refused changes, oldest first, with the server's words.
    public func failures() throws -> [FailedChange] { try device.failures() }

    /// A refused change in words: "use of 1 of Yoghurt", "Yoghurt finished", "new item Jam".
    public func summary(of change: FailedChange) -> String {
        typealias Field = PantryItem.CodingKeys
        // NB: a change carries only what it set, so each field is read alone (named by the record's coding key).
        // An item of a household the person left is no longer on the device: its refusal kept its last name.
        let name = change.fields[field: Field.name]?.stringValue ?? (try? items.item(change.recordID).name)
            ?? change.serverRecord?.fields[field: Field.name]?.stringValue ?? String(change.recordID.suffix(OutboxEntry.shortIDLength))
        if change.deleted { return "deletion of \(name)" }
        if change.fields[field: Field.boughtAt] != nil { return "new item \(name)" }
        if let used = change.deltas[field: Field.quantity], used < 0 { return "use of \(Self.number(-used)) of \(name)" }
        switch change.fields[field: Field.status]?.stringValue {
        case PantryItem.Status.consumed.rawValue?: return "\(name) finished"
        case PantryItem.Status.thrownAway.rawValue?: return "\(name) thrown away"
        default:
            let edited = change.fields.keys.filter { $0 != Field.touchedAt.stringValue }.sorted()
            return "edit of \(name)" + (edited.isEmpty ? "" : " (\(edited.joined(separator: ", ")))")
        }
    }

    /// Settles a refused change (its id, or its last 8 characters) as the person chose.
    @discardableResult
    public func settle(_ id: String, _ choice: SettleChoice) async throws -> Settlement {
        // NB: an item kept after someone finished it meanwhile comes back into the pantry (the
        // engine sets its status), no longer finished.
        if case .keepMine(var edits) = choice,
           try failures().contains(where: { ($0.id == id || $0.shortID == id) && $0.code == SyncRuleViolation.setAside }) {
            let status = PantryItem.CodingKeys.status.stringValue
            if edits[status] == nil {
                edits[status] = .string(PantryItem.Status.inPantry.rawValue)
                edits[PantryItem.CodingKeys.finishedAt.stringValue] = .null
            }
            return try await device.settle(id, .keepMine(edits: edits))
        }
        return try await device.settle(id, choice)
    }

    /// Keeping a refused change with the quantity the person says the item has now: at 0 it is finished.
    public static func keepMine(quantity: Double?, now: Date = Date()) throws -> SettleChoice {
        guard let quantity else { return .keepMine() }
        guard quantity == 0 || (try? ItemDetails.checkQuantity(quantity)) != nil else { throw PantryError.invalidQuantity(number(quantity)) }
        let millis = UnixMillis.milliseconds(now)
        var edits: [PantryItem.CodingKeys: SyncValue] = [.quantity: .number(quantity), .touchedAt: .integer(millis)]
        if quantity == 0 {
            edits[.status] = .string(PantryItem.Status.consumed.rawValue)
            edits[.finishedAt] = .integer(millis)
        }
        return .keepMine(edits: PantryItem.fields(edits))
    }

    private static func number(_ value: Double) -> String {
        let rounded = PantryItem.rounded(value)
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int64(rounded)) : String(rounded)
    }
}
