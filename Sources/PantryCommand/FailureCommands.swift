import CommandLineSupport
import ArgumentParser
import EventualAPI
import EventualKit
import Foundation
import Pantry

struct Failures: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "What the server refused, and why: settle a change with pantry settle ID; send anything else again with pantry retry ID or drop it with pantry discard ID.",
        discussion: "Example: pantry failures --json")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let pantry = try await global.app().open()
        let failures = try pantry.failures()
        let calls = try RefusedCalls(of: pantry.device)
        if output.json {
            struct Shape: Encodable {
                let id, shortId, kind, what, reason: String
                @JSONNullable var itemId: String?
                @JSONNullable var code: String?; @JSONNullable var field: String?; @JSONNullable var space: String?
                let knowsServerState: Bool; let createdAt: String
            }
            let names = try pantry.household.names()
            let changes = failures.map {
                Shape(id: $0.id, shortId: $0.shortID, kind: "change", what: pantry.summary(of: $0), reason: $0.reason, itemId: $0.recordID,
                      code: $0.code, field: $0.field, space: $0.space.map { names[$0] ?? $0 }, knowsServerState: $0.knowsServerState,
                      createdAt: Timestamp.iso8601($0.createdAt))
            }
            // NB: a refused upload names the record its file belongs to.
            let refusedCalls = try pantry.outbox.entries(state: .failed).filter { $0.kind == .call }.map { entry in
                let line = try pantry.device.line(entry)
                return Shape(id: entry.id, shortId: line.shortID, kind: "call", what: line.summary, reason: entry.lastError ?? "refused by the server",
                             itemId: line.recordID, knowsServerState: false, createdAt: Timestamp.iso8601(entry.createdAt))
            }
            print(try ItemPrinting.json(changes + refusedCalls))
            return
        }
        guard !failures.isEmpty || !calls.isEmpty else { print("Nothing was refused."); return }
        if !failures.isEmpty {
            var table = Table("ID", "WHAT", "REASON")
            table.whole = ["ID"]
            for failure in failures { table.add(failure.shortID, pantry.summary(of: failure), failure.reason) }
            print(table.render())
            Terminal.say("Settle each: pantry settle ID --keep-mine (send it again, --quantity N to say how much is left), --take-theirs (the server's version) or --discard"
                         + (failures.contains { $0.space != nil } ? "; --personal keeps a household's item as your own." : "."))
        }
        if !calls.isEmpty {
            if !failures.isEmpty { print("") }
            print(calls.render(command: "pantry"))
        }
    }
}

struct Settle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Settle a refused change: send yours again, take the server's version, or discard yours.",
        discussion: "Example: pantry settle 1a2b3c4d --keep-mine --quantity 0 (the ID from pantry failures)")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The refused change's ID, as pantry failures shows it (8 characters), or its whole id.") var id: String
    @Flag(help: "Send your change again.") var keepMine = false
    // NB: `.unconditional` so that `--quantity -1` is refused as a quantity, not read as an option.
    @Option(parsing: .unconditional, help: "With --keep-mine: how much is left, from 0 (finished) to 1000000.") var quantity: String?
    @Flag(help: "Take the server's version of the item and drop your change.") var takeTheirs = false
    @Flag(help: "Drop your change and go back to the server's version.") var discard = false
    @Flag(help: "Keep the item as your own (from a household you left, were removed from, or only view).") var personal = false

    func validate() throws {
        try usageCheck {
            if [keepMine, takeTheirs, discard, personal].filter({ $0 }).count != 1 {
                throw CLIError("Give exactly one of --keep-mine, --take-theirs, --discard or --personal")
            }
            if quantity != nil, !keepMine { throw CLIError("--quantity goes with --keep-mine") }
            _ = try left()
        }
    }

    /// The quantity typed: 0 (finished) or a quantity an item can have.
    private func left() throws -> Double? {
        guard let quantity else { return nil }
        if let number = Double(quantity.trimmingCharacters(in: .whitespaces)), number == 0 { return 0 }
        do { return try ItemDetails.quantity(typed: quantity) } catch {
            throw CLIError("'\(Terminal.oneLine(String(quantity.prefix(40))))' is not how much is left: use 0 (finished) to 1000000")
        }
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let choice: SettleChoice = keepMine ? try UserPantry.keepMine(quantity: try left()) : takeTheirs ? .takeTheirs
            : personal ? .keepAsOwn() : .discard
        let settlement: Settlement
        do {
            settlement = try await pantry.settle(id, choice)
        } catch SettleError.serverStateUnknown(let id) {
            throw CLIError("The server did not say what it holds for that item: pantry settle \(id) --keep-mine or --discard")
        } catch SettleError.notInSpace(let id, let reason) {
            throw CLIError("\(reason.hasSuffix(".") ? String(reason.dropLast()) : reason): keep it as your own with pantry settle \(id) --personal, or --discard it")
        } catch SettleError.ownAlready(let id) {
            throw CLIError("That change is not of a household's item: pantry settle \(id) --keep-mine, --take-theirs or --discard")
        }
        let what = pantry.summary(of: settlement.change)
        let item = try? pantry.items.item(settlement.change.recordID)
        let now = item.map { $0.status == .inPantry ? " (\(ItemPrinting.quantity($0)) left)" : " (\(ItemPrinting.status($0.status)))" } ?? ""
        switch choice {
        case .takeTheirs where settlement.removed:
            Terminal.say("Took the server's version: it has no such item, so it is gone from this device; your \(what) is dropped.")
        case .takeTheirs: Terminal.say("Took the server's version\(now); your \(what) is dropped.")
        case .discard:
            Terminal.say("Discarded your \(what)" + settlement.discarded(now: now, record: "item"))
        case .keepAsOwn:
            let kept = try settlement.keptAs.flatMap { try? pantry.items.item($0) }
            Terminal.say("Kept \(kept?.name ?? "the item") as your own item (\(settlement.keptAs.map { String($0.suffix(8)) } ?? "-")): "
                         + "it is sent with the next sync; the household's copy is left as the server has it.")
        case .keepMine:
            await pantry.device.sync(.localBudget, pull: false)
            switch try pantry.items.syncStates(of: item.map { [$0] } ?? [])[settlement.change.recordID] {
            case .failed(let reason)?: throw DeviceWords.pantry.refusedAgain(what, reason: reason)
            case .confirmed?: Terminal.say("Kept your \(what): the server has it now\(now).")
            default: Terminal.say("Kept your \(what): it is sent with the next sync.")
            }
        }
    }
}
