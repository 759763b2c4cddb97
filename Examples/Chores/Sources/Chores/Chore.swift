import EventualAPI
import Foundation
import EventualKit
import GRDB

/// One chore: a row of `chores`, synced as the `chores` collection (declared in `Resources/chores.app.yaml`), in
/// a household's space or the person's own. The engine makes its table and sends what changes.
public struct Chore: SyncRecord, TableRecord, Equatable {
    public static let collection = EventualApp.chores.collection("chores")
    public static let databaseTableName = collection.name

    public var id: String, title: String
    /// Who is to do it (a username); nil: anyone.
    public var assignee: String?
    /// The day it is due, `YYYY-MM-DD`.
    public var due: String?
    public var done: Bool
    /// Unix milliseconds.
    public var createdAt: Int64
    /// The household it is in (nil: the person's own list); who changed it last (nil while a change waits).
    public var space: String?, changedBy: String?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id, title, assignee, due, done, createdAt, space = "space_id", changedBy = "changed_by"
    }

    /// Its id's end, as lists show it and commands take it.
    public var shortID: String { String(id.suffix(OutboxEntry.shortIDLength)) }

    /// Open first, the soonest due first, undated last.
    static let ordered = all().order(Column(CodingKeys.done), Column(CodingKeys.due).ascNullsLast, Column(CodingKeys.createdAt))

    /// The chore `id` as a person names it ("chore Bins"), from this device's copy.
    public static func name(_ id: String, _ store: LocalStore) -> String {
        "chore " + ((try? store.reader.read { db in try fetchOne(db, key: id)?.title }) ?? String(id.suffix(OutboxEntry.shortIDLength)))
    }

    /// `text` without spaces at its ends, when it fits the field (1 character to as many as the collection allows).
    static func checked(_ text: String, _ field: CodingKeys) throws -> String {
        let text = text.trimmingCharacters(in: .whitespaces), longest = collection.fields[field.stringValue]?.maxLength ?? .max
        guard (1...longest).contains(text.count) else { throw ChoresError.badText(field.stringValue, longest: longest) }
        if let character = ControlCharacters.first(in: text) { throw ChoresError.controlCharacter(field.stringValue, character) }
        return text
    }

    /// The day `text` names, as `YYYY-MM-DD`: a day the calendar has, or `today`, `tomorrow`,
    /// `+3d` or `+2w` from `today` on this device's calendar (as the pantry's `--expires` takes
    /// them); nil for anything else.
    static func day(_ text: String, today: Date = Date()) -> String? {
        let typed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if isDay(typed) { return typed }
        let offset: Int64
        switch typed {
        case "today": offset = 0
        case "tomorrow": offset = 1
        default:
            guard typed.hasPrefix("+"), let unit = typed.last, unit == "d" || unit == "w",
                  let count = Int64(typed.dropFirst().dropLast()), (0...3650).contains(count) else { return nil }
            offset = unit == "w" ? count * 7 : count
        }
        let now = Calendar.current.dateComponents([.year, .month, .day], from: today)
        guard let year = now.year, let month = now.month, let day = now.day else { return nil }
        return CivilCalendar.text(ofDay: CivilCalendar.dayNumber(year: Int64(year), month: Int64(month), day: Int64(day)) + offset)
    }

    /// Whether `text` is a day the calendar has, as `YYYY-MM-DD`.
    static func isDay(_ text: String) -> Bool {
        let parts = text.split(separator: "-").compactMap { Int64($0) }
        guard text.count == 10, parts.count == 3 else { return false }
        return CivilCalendar.text(ofDay: CivilCalendar.dayNumber(year: parts[0], month: parts[1], day: parts[2])) == text
    }
}

/// Why a chore command did not happen, in words for the person who asked.
public enum ChoresError: Error, Equatable, CustomStringConvertible {
    case badText(String, longest: Int), controlCharacter(String, String), badDue(String), badID(String), noChore(String), whichHousehold(Int), viewer(String)
    /// A chore given to someone not in its household (`list`: its name, or "your own list").
    case notMember(String, list: String, members: [String])

    public var description: String {
        switch self {
        case .badText(let field, let longest): "A chore's \(field) has 1 to \(longest) characters"
        case .controlCharacter(let field, let character): "A chore's \(field) holds no \(character)"
        case .badDue(let text): "'\(text.prefix(40))' is not a day: use YYYY-MM-DD (e.g. 2026-05-01), today, tomorrow or +3d"
        case .badID(let id): "'\(id.prefix(40))' does not pick one chore: give the 8 characters of its id that lists show"
        case .noChore(let id): "No chore \(id.prefix(40)) on this device"
        case .whichHousehold(let count): count == 0 ? "You are in no household yet" : "You are in \(count) households: say which"
        case .viewer(let name): "You can only look at \(name)'s chores (viewer): its owner can make you an editor"
        case .notMember(let user, let list, let members):
            "\(user.prefix(40)) is not in \(list): give a chore there to " + (members.count == 1 ? members[0] : "one of " + members.joined(separator: ", "))
                + (list == "your own list" ? "" : " (someone invited is in once they accept)")
        }
    }
}
