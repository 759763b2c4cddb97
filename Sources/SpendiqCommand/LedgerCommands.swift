import CommandLineSupport
import ArgumentParser
import EventualAPI
import EventualKit
import Foundation
import Spending

extension GlobalOptions {
    /// The signed-in person's data (every start records "last seen"); nobody is signed in where
    /// there is no data folder, and none is created.
    func spending() async throws -> UserSpending {
        let spending = try await app(creating: false).open()
        await sayUndoneShares(spending)
        return spending
    }
}

/// Prints what a write went over and sends it if the server answers within the local budget.
func finish(_ spending: UserSpending, warnings: [LimitWarning] = []) async {
    for warning in warnings { print(Terminal.paint(Terminal.wrap(warning.description), .yellow)) }
    // NB: a write the server refused at once (a viewer's) is said now, not only at the next status.
    var report = await spending.device.sync(.localBudget, pull: false)
    // NB: a share undone here is moved back at once, when the server answers.
    if await sayUndoneShares(spending) > 0 { report = await spending.device.sync(.localBudget, pull: false) }
    let failures = report.rejected > 0 ? (try? spending.device.failures()) ?? [] : []
    // NB: a refused change waits for no sync: saying it waits would not be true.
    if let refused = DeviceWords.spendiq.refused("it", after: report, failures: failures) {
        print(Terminal.paint(Terminal.wrap(refused), .yellow))
    } else if let waiting = DeviceWords.spendiq.waiting("the change", after: report) {
        print(Terminal.paint(waiting, .yellow))
    }
}

extension AccountKind: ExpressibleByArgument {}
extension LimitPeriod: ExpressibleByArgument {}

struct Accounts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Your accounts and their balances: list (the default), add, edit, archive; share, members, role, remove, leave, unshare.",
        subcommands: [AccountsList.self, AccountsAdd.self, AccountsEdit.self, AccountsArchive.self, AccountsShare.self,
                      AccountsMembers.self, AccountsRole.self, AccountsRemove.self, AccountsLeave.self, AccountsUnshare.self],
        defaultSubcommand: AccountsList.self)
    @OptionGroup var global: GlobalOptions
}

struct AccountsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Every account with its balance.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Flag(help: "Show archived accounts too.") var archived = false

    func run() async throws {
        let spending = try await global.spending()
        let balances = try spending.ledger.balances(includeArchived: archived)
        let shares = try spending.sharing.shares()
        // NB: a balance adds every transaction: while a first sync has still to bring some, it is short.
        let arriving = await spending.device.firstSyncUnderWay()
        let states = try spending.syncStates(of: balances.map(\.account))
        if output.json {
            struct Shared: Encodable { let space, spaceId, role: String; let with, invited: [String]; @JSONNullable var invitedAs: String? }
            struct Shape: Encodable {
                let id, shortId, name, kind, currency: String; let balanceMinor: Int64; let archived: Bool; @JSONNullable var colour: String?
                @JSONNullable var shared: Shared?
                let syncState: SyncStateJSON
            }
            print(try Terminal.json(balances.map { entry in
                IncompleteJSON(Shape(id: entry.account.id, shortId: String(entry.account.id.suffix(8)), name: entry.account.name,
                      kind: entry.account.kind.rawValue, currency: entry.account.currency,
                      balanceMinor: entry.balanceMinor, archived: entry.account.archived, colour: entry.account.colour,
                      shared: entry.account.space.map { space in
                          let share = shares[space]
                          return Shared(space: share?.spaceName ?? space, spaceId: space, role: share?.role.rawValue ?? SpaceRole.viewer.rawValue,
                                        with: share?.with ?? [], invited: share?.invited ?? [], invitedAs: share?.invitedAs?.rawValue)
                      }, syncState: SyncStateJSON(states[entry.account.id] ?? .confirmed)), arriving: arriving, counts: false)
            }))
            return
        }
        RecordsArriving.say(arriving, command: "spendiq")
        guard !balances.isEmpty else {
            Terminal.say("No accounts yet: spendiq accounts add NAME --currency EUR [--kind cash|bank|card|savings]")
            return
        }
        let anyShared = balances.contains { $0.account.space != nil }
        // NB: marked as transactions are: a rename that waits to be sent, or one the server refused.
        let marks = balances.map { SyncMark(states[$0.account.id] ?? .confirmed) }
        let marked = marks.contains { $0 != .none }
        var table = Table()
        table.headers = (marked ? [""] : []) + ["NAME", "KIND", "BALANCE"] + (anyShared ? ["SHARED"] : []) + [archived ? "ARCHIVED" : "ID"]
        table.whole = ["", "BALANCE", "ID"]
        table.cutFirst = ["SHARED", "NAME"]
        for ((account, balance), mark) in zip(balances, marks) {
            let shared = account.space.map { Self.sharing(shares[$0]) }
            let cells = [account.name, account.kind.rawValue, Money(minorUnits: balance, currency: account.currency).description]
                + (anyShared ? [shared ?? "-"] : []) + [archived ? (account.archived ? "yes" : "no") : String(account.id.suffix(8))]
            table.rows.append((marked ? [Table.Cell(mark.rawValue, mark == .refused ? .red : .yellow)] : []) + cells.map { Table.Cell($0) })
        }
        print(table.render() + (SyncMark.legend(marks, failures: "spendiq failures").map { "\n" + $0 } ?? ""))
    }
}

extension AccountsList {
    /// "with bob", "with alice (viewer)": whom an account is shared with, and whether the person only reads it.
    static func sharing(_ share: AccountShare?) -> String {
        guard let share else { return "yes" }
        let with = !share.with.isEmpty ? "with " + share.with.joined(separator: ", ")
            : !share.invited.isEmpty ? "invited " + share.invited.joined(separator: ", ") : share.spaceName
        return with + (share.role == .viewer ? ", read-only" : share.invitedAs == .viewer ? " (viewer)" : "")
    }
}

struct AccountsAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Open an account.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Its name, e.g. Cash or \"Main bank\".") var name: String
    @Option(help: "cash, bank, card or savings.") var kind: AccountKind = .cash
    @Option(help: "ISO 4217 code, e.g. EUR, USD, COP.") var currency: String
    // NB: unconditional, so that a negative balance (-20, an overdrawn card) is its value, not an option.
    @Option(parsing: .unconditional, help: "What it holds now, e.g. 250.00 or -20 (default 0).") var opening: String?
    @Option(help: "A colour for screens: a name such as green, or #2a9d8f.") var colour: String?

    func run() async throws {
        let spending = try await global.spending()
        let account = try await spending.ledger.addAccount(name: name, kind: kind, currency: currency, colour: colour, openingBalance: opening)
        Terminal.say("Added \(account.kind.rawValue) account \(account.name) (\(Money(minorUnits: account.openingBalanceMinor, currency: account.currency))).")
        await finish(spending)
    }
}

struct AccountsEdit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "edit", abstract: "Rename an account, or change its kind or colour.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The account's name (or its 8-character id).") var account: String
    @Option(help: "A new name.") var name: String?
    @Option(help: "cash, bank, card or savings.") var kind: AccountKind?
    @Option(help: "A colour: a name such as green, or #2a9d8f (empty for none).") var colour: String?

    func run() async throws {
        let spending = try await global.spending()
        let edited = try await spending.ledger.editAccount(account, name: name, kind: kind, colour: colour)
        Terminal.say("Changed \(edited.name).")
        await finish(spending)
    }
}

struct AccountsArchive: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "archive", abstract: "Archive an account: hidden from lists, its history kept.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The account's name (or its 8-character id).") var account: String

    func run() async throws {
        let spending = try await global.spending()
        let archived = try await spending.ledger.archiveAccount(account)
        Terminal.say("Archived \(archived.name).")
        await finish(spending)
    }
}

/// Options shared by `add` and `edit`.
struct TransactionOptions: ParsableArguments {
    @Option(help: "The account's name (or its 8-character id).") var account: String?
    @Option(help: "food, transport, housing, health, leisure, education, shopping, income, other, or your own.") var category: String?
    @Option(help: "A note.") var note: String?
    @Option(help: "When: 2026-11-20, 2026-11-20T14:30, 2026-11-20T14:30+01:00, today, yesterday (default now; tomorrow at the latest).")
    var date: String?
    @Option(help: "LATITUDE,LONGITUDE where it happened, e.g. 43.7384,7.4246.") var at: String?
    @Option(help: "The shop or place.") var place: String?

    func details(amount: String?) throws -> TransactionDetails {
        TransactionDetails(amount: amount, account: account, category: category, note: note, date: date, place: place,
                           position: try at.map { text throws(SpendingError) in try GeoPosition(parsing: text, orThrow: SpendingError.invalidCoordinates) })
    }
}

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Record an expense or an income: spendiq add expense 12.50 --account Cash --category food.")
    enum Kind: String, ExpressibleByArgument, CaseIterable { case expense, income }
    @OptionGroup var global: GlobalOptions
    @Argument(help: "expense or income.") var kind: Kind
    @Argument(help: "The amount, e.g. 12.50 (with at most the currency's decimals).") var amount: String
    @OptionGroup var options: TransactionOptions
    @Option(help: "A photo of the receipt (JPEG, PNG or HEIC, at most 20 MiB; - reads standard input): kept here, uploaded when online.") var receipt: String?

    func validate() throws {
        try usageCheck { if options.account == nil { throw CLIError("Which account? Give --account NAME") } }
    }

    func run() async throws {
        let details = try options.details(amount: amount)
        let spending = try await global.spending()
        let photo = try receipt.map { try AttachmentWords.prepare($0, option: "--receipt", with: spending.attachments) }
        let recorded = try await spending.record(kind == .expense ? .expense : .income, details, receipt: photo)
        let transaction = recorded.transaction
        Terminal.say("Recorded \(kind.rawValue) \(transaction.money) on \(transaction.category ?? "other") (\(transaction.id.suffix(8)))"
            + (photo.map { " with its receipt (\(ByteCount.text($0.size)))" } ?? "") + ".")
        await finish(spending, warnings: recorded.warnings)
    }
}

struct Transfer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Move money between two of your accounts.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The amount.") var amount: String
    @Option(help: "The account it leaves (its name or 8-character id).") var from: String
    @Option(help: "The account it reaches (its name or 8-character id).") var to: String
    @Option(help: "A note.") var note: String?
    @Option(help: "When (default now).") var date: String?

    func run() async throws {
        let spending = try await global.spending()
        let transfer = try await spending.ledger.transfer(amount, from: from, to: to, note: note, date: date)
        // NB: between spaces, each account's space holds its own side: the shared one's members see the money arrive or leave.
        Terminal.say("Moved \(transfer.money) from \(from) to \(to) (\(transfer.id.suffix(8)))."
                     + (transfer.leg == nil ? "" : " The shared account's members see its side of it."))
        await finish(spending)
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change a transaction (its id's last 8 characters are enough).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The transaction's id, as listed.") var id: String
    @Option(parsing: .unconditional, help: "A new amount.") var amount: String?
    @OptionGroup var options: TransactionOptions
    @Option(help: "A new photo of the receipt (JPEG, PNG or HEIC, at most 20 MiB; - reads standard input): kept here, uploaded when online.") var receipt: String?

    func run() async throws {
        let details = try options.details(amount: amount)
        let spending = try await global.spending()
        // NB: the photo is checked and copied in before anything is written: a refusal changes nothing.
        let photo = try receipt.map { try AttachmentWords.prepare($0, option: "--receipt", with: spending.attachments) }
        let recorded = try await spending.ledger.edit(id, details, receipt: photo)
        Terminal.say("Changed \(recorded.transaction.id.suffix(8)): \(recorded.transaction.money) on \(recorded.transaction.category ?? "other")"
                     + (photo.map { ", with its new receipt (\(ByteCount.text($0.size)))" } ?? "") + ".")
        await finish(spending, warnings: recorded.warnings)
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a transaction on every device.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The transaction's id, as listed.") var id: String

    func run() async throws {
        let spending = try await global.spending()
        let deleted = try await spending.ledger.delete(id)
        Terminal.say("Deleted \(deleted.kind.rawValue) \(deleted.money) (\(deleted.id.suffix(8))).")
        await finish(spending)
    }
}
