import CommandLineSupport
import ArgumentParser
import EventualAPI
import EventualKit
import Foundation
import Spending

struct Failures: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "What the server refused, and why: settle a change with spendiq settle ID; send anything else again with spendiq retry ID or drop it with spendiq discard ID.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let spending = try await global.spending()
        let failures = try spending.failures()
        let calls = try RefusedCalls(of: spending.device)
        if output.json {
            struct Shape: Encodable {
                let id, shortId, kind, what, reason: String
                @JSONNullable var collection: String?; @JSONNullable var recordId: String?
                @JSONNullable var code: String?; @JSONNullable var field: String?; @JSONNullable var space: String?
                let knowsServerState: Bool; let createdAt: String
            }
            let changes = failures.map {
                Shape(id: $0.id, shortId: $0.shortID, kind: "change", what: spending.summary(of: $0), reason: $0.reason,
                      collection: $0.collection, recordId: $0.recordID, code: $0.code, field: $0.field, space: $0.space,
                      knowsServerState: $0.knowsServerState, createdAt: Timestamp.iso8601($0.createdAt))
            }
            // NB: a refused upload names the record its file belongs to.
            let refusedCalls = try spending.outbox.entries(state: .failed).filter { $0.kind == .call }.map { entry in
                let line = try spending.device.line(entry)
                return Shape(id: entry.id, shortId: line.shortID, kind: "call", what: line.summary, reason: entry.lastError ?? "refused by the server",
                             collection: line.upload?.holders.first?.collection, recordId: line.recordID, knowsServerState: false, createdAt: Timestamp.iso8601(entry.createdAt))
            }
            print(try Terminal.json(changes + refusedCalls))
            return
        }
        guard !failures.isEmpty || !calls.isEmpty else { print("Nothing was refused."); return }
        if !failures.isEmpty {
            var table = Table("ID", "WHAT", "REASON")
            table.whole = ["ID"]
            table.cutFirst = ["REASON"]
            for failure in failures { table.add(failure.shortID, spending.summary(of: failure), failure.reason) }
            print(table.render())
            Terminal.say("Settle each: spendiq settle ID --keep-mine (send it again), --take-theirs (the server's version) or --discard"
                         + (failures.contains { $0.space != nil } ? "; --personal (--account A for a transaction) keeps one of a shared account as your own." : "."))
        }
        if !calls.isEmpty {
            if !failures.isEmpty { print("") }
            print(calls.render(command: "spendiq"))
        }
    }
}

struct Settle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Settle a refused change: send yours again, take the server's version, or discard yours.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The refused change's ID, as spendiq failures shows it (8 characters), or its whole id.") var id: String
    @Flag(help: "Send your change again, as it is.") var keepMine = false
    @Flag(help: "Take the server's version of the record and drop your change.") var takeTheirs = false
    @Flag(help: "Drop your change and go back to the server's version.") var discard = false
    @Flag(help: "Keep it as your own (from an account you no longer share, or only view); a transaction needs --account.") var personal = false
    @Option(help: "With --personal: the account of yours a transaction goes to.") var account: String?

    func validate() throws {
        try usageCheck {
            let chosen = [keepMine, takeTheirs, discard, personal].filter { $0 }.count
            if chosen != 1 { throw CLIError("Give exactly one of --keep-mine, --take-theirs, --discard or --personal") }
            if account != nil, !personal { throw CLIError("--account goes with --personal") }
        }
    }

    func run() async throws {
        let spending = try await global.spending()
        let choice: SettleChoice = keepMine ? .keepMine() : takeTheirs ? .takeTheirs
            : personal ? .keepAsOwn(edits: try spending.ownEdits(for: id, account: account)) : .discard
        let settlement: Settlement
        do {
            settlement = try await spending.settle(id, choice)
        } catch SettleError.serverStateUnknown(let id) {
            throw CLIError("The server did not say what it holds for that record: spendiq settle \(id) --keep-mine or --discard")
        } catch SettleError.notInSpace(let id, let reason) {
            throw CLIError("\(reason.hasSuffix(".") ? String(reason.dropLast()) : reason): keep it as your own with spendiq settle \(id) --personal "
                           + "(--account A for a transaction), or --discard it")
        } catch SettleError.ownAlready(let id) {
            throw CLIError("That change is not of a shared record: spendiq settle \(id) --keep-mine, --take-theirs or --discard")
        }
        let what = spending.summary(of: settlement.change)
        switch choice {
        case .takeTheirs where settlement.removed:
            Terminal.say("Took the server's version: it has no such record, so the \(what) is gone from this device; your change is dropped.")
        case .takeTheirs: Terminal.say("Took the server's version of the \(what); your change is dropped.")
        case .discard: Terminal.say("Discarded your change to the \(what)" + settlement.discarded(record: "record"))
        case .keepAsOwn:
            Terminal.say("Kept the \(what) as your own (\(settlement.keptAs.map { String($0.suffix(8)) } ?? "-")): it is sent with the next sync; "
                         + "the shared copy is left as the server has it.")
        case .keepMine:
            let record = settlement.change.recordID
            let collection = SyncCollections.spending.first { $0.name == settlement.change.collection }
            let state = try collection.flatMap { try spending.device.syncStates($0, ids: [record])[record] }
            switch state {
            case .failed(let reason)?: throw DeviceWords.spendiq.refusedAgain(what, reason: reason)
            case .confirmed?: Terminal.say("Kept your \(what): the server has it now.")
            default: Terminal.say("Kept your \(what): it is sent with the next sync.")
            }
        }
    }
}
