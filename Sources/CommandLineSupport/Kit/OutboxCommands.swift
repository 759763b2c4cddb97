import ArgumentParser
import EventualAPI
import EventualKit
import Foundation

// The outbox's subcommands of every app (`AppCommand.outboxCommands`), written once: what waits,
// sending it now, and what to do with what the server refused.

/// `status`: online or offline, what waits or was refused (with ids), the last sync.
public struct Status<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "status", abstract: "Online or offline, what waits to be sent or was refused (with ids), and the last sync.",
                             usage: "\(App.words.command) status [--json]")
    }

    @OptionGroup var global: SharedOptions<App>
    @OptionGroup var output: OutputOptions

    public init() {}

    public func run() async throws {
        let user = try await App.open(global, network: true)
        let status = try await App.status(user)
        let details = try await App.statusDetails(user, status)
        if output.json {
            print(try Terminal.json(StatusJSON(status, device: user.device, details: details)))
        } else {
            print(await App.statusText(user, status, details))
        }
    }
}

/// `sync`: sends what waits and fetches what changed elsewhere, now.
public struct Sync<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "sync", abstract: "Send what waits and fetch what changed elsewhere (your devices, shared ones), now.",
                             usage: "\(App.words.command) sync")
    }

    @OptionGroup var global: SharedOptions<App>

    public init() {}

    public func run() async throws {
        let user = try await App.open(global, network: false)
        let bar = ProgressBar(enabled: Terminal.stderrIsTTY, waiting: App.words.many)
        let report = try await FirstSyncBar.whileRunning(user.device.engine, readyNote: App.firstSyncReadyNote) {
            try await App.sync(user) { done, total in bar.show(done: done, total: total) }
        }
        bar.finish()
        Terminal.say(try await App.said(report, user))
        // NB: refusals may be the server's not knowing the app (as this device declares it): said once, in one line.
        if report.rejected > 0, let words = await user.device.accounts.servedApp(timeout: .seconds(3))?.words { Terminal.say(words) }
        if report.waitingForNewerApp > 0 {
            let app = user.device.accounts.app.registration
            Terminal.say("\(report.waitingForNewerApp) change(s) wait for the server to serve version \(app.version) of \(app.title):"
                + " kept here, they go once its operator deploys it")
        }
    }
}

/// `failures`: what the server refused and why, changes of records and calls alike.
public struct Failures<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        let name = App.words.command
        return CommandConfiguration(
            commandName: "failures",
            abstract: "What the server refused, and why: settle each with \(name) settle ID"
                + (App.words.settlesCalls ? "." : " (what is not a record's change: \(name) retry ID or \(name) discard ID)."),
            usage: "\(name) failures [--json]", discussion: "Example: \(name) failures --json")
    }

    @OptionGroup var global: SharedOptions<App>
    @OptionGroup var output: OutputOptions

    public init() {}

    public func run() async throws {
        let user = try await App.open(global, network: false)
        let changes = try user.device.failures()
        let calls = try RefusedCalls(of: user.device)
        let words = App.words
        if output.json {
            let names = Dictionary((try? user.device.spaces.list())?.map { ($0.id, $0.name) } ?? [], uniquingKeysWith: { first, _ in first })
            let refusedCalls = try user.device.outbox.entries(state: .failed).filter { $0.kind == .call }
            print(try Terminal.json(changes.map { FailureJSON($0, what: App.summary(of: $0, user), spaceNames: names) }
                                    + refusedCalls.map { FailureJSON($0, line: try user.device.line($0)) }))
            return
        }
        guard !changes.isEmpty || !calls.isEmpty else { print("Nothing was refused."); return }
        if !changes.isEmpty {
            var table = Table("ID", "WHAT", "REASON")
            table.whole = ["ID"]
            table.cutFirst = ["REASON"]
            for change in changes { table.add(change.shortID, App.summary(of: change, user), change.reason) }
            print(table.render())
            Terminal.say("Settle each: \(words.command) settle ID --keep-mine (send it again\(App.settleHint)), --take-theirs (the server's version) or --discard"
                         + (changes.contains { $0.space != nil }
                            ? "; --personal keeps one of a shared \(User.deviceApp.spaceNoun) as your own." : "."))
        }
        if !calls.isEmpty {
            if !changes.isEmpty { print("") }
            print(words.settlesCalls ? calls.render(settling: words.command) : calls.render(command: words.command))
        }
    }

    typealias User = App.User
}

/// `settle`: what to do with a refused change: send it again, take the server's version, drop it.
public struct Settle<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        let name = App.words.command
        return CommandConfiguration(
            commandName: "settle",
            abstract: App.words.settlesCalls ? "Settle a refused \(App.words.one): send it again (--keep-mine) or drop it (--discard)."
                : "Settle a refused change: send yours again, take the server's version, discard yours, or keep it as your own.",
            // NB: --personal is a choice wherever records are shared, though the advice a refusal
            // prints names the usual three.
            usage: "\(name) settle ID \(App.words.settleChoices)" + (App.words.settlesCalls ? "" : " | --personal"),
            discussion: "The ID is the one \(name) failures shows. Example: \(name) settle 1a2b3c4d --keep-mine")
    }

    @OptionGroup var global: SharedOptions<App>
    @OptionGroup var entry: RefusedEntryArgument
    @Flag(help: "Send yours again.") var keepMine = false
    @Flag(help: ArgumentHelp("Take the server's version of the record and drop your change.", visibility: App.words.settlesCalls ? .private : .default))
    var takeTheirs = false
    @Flag(help: "Drop yours, for good (a record goes back to the server's version).") var discard = false
    @Flag(help: ArgumentHelp("Keep it as your own (from a \(App.User.deviceApp.spaceNoun) you left, were removed from, or only view).",
                             visibility: App.words.settlesCalls ? .private : .default))
    var personal = false
    @OptionGroup var more: App.SettleOptions

    public init() {}

    /// The one choice the flags make, if exactly one was given.
    private var flag: SettleFlag? {
        let given: [(Bool, SettleFlag)] = [(keepMine, .keepMine), (takeTheirs, .takeTheirs), (discard, .discard), (personal, .personal)]
        let chosen = given.filter(\.0)
        return chosen.count == 1 ? chosen[0].1 : nil
    }

    public func validate() throws {
        try usageCheck {
            let words = App.words
            guard let flag else {
                throw CLIError(words.settlesCalls ? "Give exactly one of --keep-mine or --discard"
                               : "Give exactly one of --keep-mine, --take-theirs, --discard or --personal")
            }
            if words.settlesCalls, flag == .takeTheirs || flag == .personal {
                throw CLIError("A \(words.one) has no server version to take or share to keep: --keep-mine sends it again, --discard drops it")
            }
            _ = try App.settleChoice(more, flag, id: entry.id, nil)
        }
    }

    public func run() async throws {
        let user = try await App.open(global, network: false)
        let words = App.words
        guard let flag else { return }
        guard !words.settlesCalls else {
            // NB: an app whose refusals are calls (SustainU's scans) sends again or drops.
            if flag == .keepMine { try await Retry<App>.retry(entry.id, user) } else { try await Discard<App>.discard(entry.id, user) }
            return
        }
        let choice = try App.settleChoice(more, flag, id: entry.id, user)
        let settlement: Settlement
        do {
            settlement = try await words.speakingOutbox { try await App.settle(user, entry.id, choice) }
        } catch SettleError.serverStateUnknown(let id) {
            throw CLIError("The server did not say what it holds for that \(words.record): \(words.command) settle \(id) --keep-mine or --discard")
        } catch SettleError.notInSpace(let id, let reason) {
            throw CLIError("\(reason.hasSuffix(".") ? String(reason.dropLast()) : reason): keep it as your own with "
                           + "\(words.command) settle \(id) --personal, or --discard it")
        } catch SettleError.ownAlready(let id) {
            throw CLIError("That change is not of a shared \(words.record): \(words.command) settle \(id) --keep-mine, --take-theirs or --discard")
        }
        let what = App.summary(of: settlement.change, user)
        switch choice {
        case .takeTheirs where settlement.removed:
            Terminal.say("Took the server's version: it has no such \(words.record), so it is gone from this device; your \(what) is dropped.")
        case .takeTheirs: Terminal.say("Took the server's version\(App.settledNow(settlement, user)); \(words.yourChange(what)) is dropped.")
        case .discard: Terminal.say("Discarded \(words.yourChange(what))" + settlement.discarded(now: App.settledNow(settlement, user), record: words.record, command: words.command))
        case .keepAsOwn:
            let kept = settlement.keptAs.flatMap { try? User.deviceApp.recordName(settlement.change.collection, $0, user.device.store) }
            Terminal.say("Kept \(kept ?? "the \(words.record)") as your own (\(settlement.keptAs.map { String($0.suffix(OutboxEntry.shortIDLength)) } ?? "-")): "
                         + "it is sent with the next sync; the shared copy is left as the server has it.")
        case .keepMine:
            await user.device.sync(.localBudget, pull: false)
            let record = settlement.change.recordID
            let collection = User.deviceApp.registration.collections.first { $0.name == settlement.change.collection }
            switch try collection.flatMap({ try user.device.syncStates($0, ids: [record])[record] }) {
            case .failed(let reason)?: throw words.refusedAgain(what, reason: reason, id: settlement.queued)
            case .confirmed?: Terminal.say("Kept \(words.yourChange(what)): the server has it now\(App.settledNow(settlement, user)).")
            default: Terminal.say("Kept \(words.yourChange(what)): it is sent with the next sync.")
            }
        }
    }

    typealias User = App.User
}

/// `retry`: sends again what the server refused.
public struct Retry<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        let name = App.words.command
        return CommandConfiguration(
            commandName: "retry",
            abstract: "Send again what the server refused (its ID from \(name) failures"
                + (App.words.settlesCalls ? ")." : "; a record's change is settled with \(name) settle)."),
            usage: "\(name) retry ID")
    }

    @OptionGroup var global: SharedOptions<App>
    @OptionGroup var entry: RefusedEntryArgument

    public init() {}

    public func run() async throws { try await Self.retry(entry.id, try await App.open(global, network: false)) }

    /// Sends the refused entry `id` again, and says what came of it.
    static func retry(_ id: String, _ user: App.User) async throws {
        let (line, outcome) = try await App.words.speakingOutbox { try await App.retry(user, id) }
        Terminal.say(try App.words.retried(line.summary, outcome))
    }
}

/// `discard`: drops for good what the server refused.
public struct Discard<App: AppCommand>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "discard", abstract: "Drop what the server refused, for good (its ID from \(App.words.command) failures).",
                             usage: "\(App.words.command) discard ID")
    }

    @OptionGroup var global: SharedOptions<App>
    @OptionGroup var entry: RefusedEntryArgument

    public init() {}

    public func run() async throws { try await Self.discard(entry.id, try await App.open(global, network: false)) }

    /// Drops the refused entry `id`, and says so.
    static func discard(_ id: String, _ user: App.User) async throws {
        let words = App.words
        let line = try await words.speakingOutbox { try await App.discard(user, id) }
        let dropped = words.settlesCalls ? "Dropped the refused \(line.summary)." : "Dropped the refused change: \(line.summary)."
        Terminal.say(words.droppedUpload(line) ?? dropped + (line.recordID == nil ? "" : " This device shows the server's version from the next sync."))
    }
}

/// A one-line bar on stderr, drawn only on a terminal and only when enough entries wait for it to matter.
final class ProgressBar: Sendable {
    let enabled: Bool
    let waiting: String
    static let threshold = 20

    init(enabled: Bool, waiting: String) {
        self.enabled = enabled
        self.waiting = waiting
    }

    func show(done: Int, total: Int) {
        guard enabled, total >= Self.threshold else { return }
        let width = 30
        let filled = total == 0 ? width : min(width, done * width / total)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        // NB: labelled as the first sync's bar is ("Fetching"): a bare bar says nothing of what moves.
        FileHandle.standardError.write(Data("\rSending [\(bar)] \(done)/\(total) waiting \(waiting)".utf8))
    }

    func finish() {
        if enabled { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

extension DeviceWords {
    /// Runs `body`, saying the outbox's refusal of an id in this app's words.
    func speakingOutbox<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch OutboxError.idTooShort(let id) {
            throw ValidationError("'\(Terminal.oneLine(String(id.prefix(40))))' is too short to pick a \(settlesCalls ? one : "change"): "
                                  + "give the \(OutboxEntry.shortIDLength) characters `\(command) failures` shows")
        } catch OutboxError.notFailed(let id) {
            throw CLIError("No refused \(settlesCalls ? one : "change") '\(Terminal.oneLine(String(id.prefix(40))))' is on this device: `\(command) failures` lists them with their ids")
        } catch OutboxError.ambiguous(let id, let matches) {
            throw CLIError("'\(Terminal.oneLine(String(id.prefix(40))))' matches \(matches) refused \(many): give the whole id")
        }
    }
}
