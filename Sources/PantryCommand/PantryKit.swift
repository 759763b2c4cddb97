import ArgumentParser
import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Pantry

/// The pantry's account and outbox subcommands: the command kit's, in the pantry's words.
extension PantryCommand: AppCommand {
    typealias User = UserPantry

    static var words: DeviceWords { .pantry }

    static func app(_ options: GlobalOptions, creating: Bool) throws -> PantryApp {
        PantryApp(configuration: try options.configuration(creating: creating))
    }

    static var spaceCommand: String { "pantry household" }

    static var joined: String { "its items are on this device (pantry list)" }

    static func verified(_ address: String?) -> String {
        "Email confirmed: household invitations sent to it now show in pantry household invitations."
    }

    static func statusText(_ user: UserPantry, _ status: DeviceStatus, _ details: NoOptions?) async -> String {
        [words.report(status, recordColumn: "ITEM"), words.signInAgain(user.device)].compactMap { $0 }.joined(separator: "\n")
    }

    static func sent(_ report: SyncReport) -> String {
        // NB: the report counts calls of every kind: a household's (a join, an invitation) is not a
        // contribution, nor the engine's fetch of an item's server version after a settle.
        let household = report.calls { $0.hasPrefix("spaces.") }, photos = report.callsByOperation[Attachments.uploadOperation] ?? 0
        let contributions = max(0, report.calls - household - photos - report.upkeepCalls)
        return "sent \(report.sent - report.duplicates) change(s) and \(contributions) knowledge-base contribution(s)"
            + (household > 0 ? ", \(household) household change(s)" : "") + (photos > 0 ? ", \(photos) photo(s)" : "")
            + ", fetched \(report.pulled)"
    }

    static func summary(of change: FailedChange, _ user: UserPantry) -> String { user.summary(of: change) }

    static var settleHint: String { ", --quantity N to say how much is left" }

    static func settleChoice(_ options: PantrySettleOptions, _ flag: SettleFlag, id: String, _ user: UserPantry?) throws -> SettleChoice {
        guard let typed = options.quantity else { return flag.choice }
        guard flag == .keepMine else { throw CLIError("--quantity goes with --keep-mine") }
        // NB: 0 is a finished item, which an item's own quantity may not be.
        let left: Double
        if let number = Double(typed.trimmingCharacters(in: .whitespaces)), number == 0 {
            left = 0
        } else {
            do { left = try ItemDetails.quantity(typed: typed) } catch {
                throw CLIError("'\(Terminal.oneLine(String(typed.prefix(40))))' is not how much is left: use 0 (finished) to 1000000")
            }
        }
        return try UserPantry.keepMine(quantity: left)
    }

    static func settledNow(_ settlement: Settlement, _ user: UserPantry) -> String {
        guard let item = try? user.items.item(settlement.change.recordID) else { return "" }
        return item.status == .inPantry ? " (\(ItemPrinting.quantity(item)) left)" : " (\(ItemPrinting.status(item.status)))"
    }
}

extension PantryCommand: AppWithAttachments {
    static var attachmentNoun: (command: String, noun: String, record: String) { ("photo", "photo", "item") }

    static func attachment(of id: String, _ user: UserPantry) throws -> RecordAttachment {
        let (item, photo) = try user.items.photo(of: id)
        return RecordAttachment(title: "Photo of \(item.name)", reference: photo, space: item.space,
                                missing: "\(item.name) has no photo (pantry edit \(item.id.suffix(8)) --photo FILE adds one).")
    }
}

/// `settle`'s option of the pantry's own: how much of the item is left.
struct PantrySettleOptions: ParsableArguments {
    // NB: `.unconditional` so that `--quantity -1` is refused as a quantity, not read as an option.
    @Option(parsing: .unconditional, help: "With --keep-mine: how much is left, from 0 (finished) to 1000000.") var quantity: String?
}

extension DeviceWords {
    /// The pantry's words for its outbox.
    static let pantry = DeviceWords(command: "pantry", entries: "changes", one: "change(s)", many: "change(s)", record: "item",
                                    yourChange: { "your \($0)" }, watch: "pantry list --watch",
                                    quotaAdvice: "In the pantry, `pantry delete ID` deletes an item for good and `pantry delete --gone` "
                                        + "every item used up or thrown away, each freeing its place at once")
}
