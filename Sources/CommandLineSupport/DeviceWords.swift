import EventualAPI
import EventualKit
import Foundation

/// What every app's command says of the device layer (signing in and out, the outbox, a status),
/// in one set of sentences with the app's name and its word for what waits in the outbox.
public struct DeviceWords: Sendable {
    /// The command's name: "pantry".
    public let command: String
    /// What waits in the outbox, as prose says it: "changes", "scans and visits".
    public let entries: String
    /// The same counted, for one entry and for several: "change(s)", or "scan or visit" and "scans or visits".
    public let one: String, many: String
    /// Said after a sign-out the server has not heard of yet.
    public let signOutQueued: String
    /// The choices `settle` takes, as its usage says them: "--keep-mine | --take-theirs | --discard".
    public let settleChoices: String
    /// Whether `settle` takes every refused entry (sustainu's scans and visits are calls), not
    /// only a change of a record: the engine retries or discards a refused call, never settles it.
    public let settlesCalls: Bool
    /// What the app calls one of its records in prose: "item", "record".
    public let record: String
    /// A refused change of the person's, said from its summary: "your use of 2 of Eggs", "your
    /// change to the expense EUR 9.00".
    public let yourChange: @Sendable (String) -> String
    /// The command that shows another device's change as it is made ("pantry list --watch"); nil
    /// for an app whose records are not synced (its engine holds no live channel).
    public let watch: String?
    /// What frees room under the record quota in this app, said after a refusal for it.
    public let quotaAdvice: String?

    public init(command: String, entries: String, one: String, many: String, record: String = "record",
                yourChange: @escaping @Sendable (String) -> String = { "your change to the \($0)" },
                signOutQueued: String = "The server will hear of it when it can be reached.",
                settleChoices: String = "--keep-mine | --take-theirs | --discard", settlesCalls: Bool = false,
                watch: String? = nil, quotaAdvice: String? = nil) {
        self.command = command
        self.watch = watch
        self.quotaAdvice = quotaAdvice
        self.record = record
        self.yourChange = yourChange
        self.entries = entries
        self.one = one
        self.many = many
        self.signOutQueued = signOutQueued
        self.settleChoices = settleChoices
        self.settlesCalls = settlesCalls
    }

    /// "1 scan or visit waits", "2 scans or visits wait": a count with its noun, and the verb that agrees.
    /// A noun that does not change with the number ("change(s)") takes the plural verb.
    public func count(_ number: Int, _ verbOne: String = "", _ verbMany: String = "") -> String {
        let phrase = number == 1 && one != many ? "1 \(one) \(verbOne)" : "\(number) \(many) \(verbMany)"
        return phrase.trimmingCharacters(in: .whitespaces)
    }

    /// "Signed in as alice." (and what came with it), or "Signed in as alice offline: …".
    public func signedIn(_ username: String, online: Bool, note: String? = nil) -> String {
        guard online else {
            return "Signed in as \(username) " + Terminal.paint("offline", .yellow) + ": \(entries) wait on this device until the server can be reached."
        }
        return "Signed in as \(username)." + (note.map { " " + $0 } ?? "")
    }

    /// What a command that wrote says when `what` ("the change", "your vote") did not reach the
    /// server in the moment it waited: that it waits on this device, and, honestly, why; nil when
    /// the round finished without a failure (sent, or refused: the caller says a refusal).
    public func waiting(_ what: String, after report: SyncReport) -> String? {
        guard report.finished else { return "The server has not answered yet: \(what) waits and is sent at the next sync." }
        switch report.failure {
        case .unreachable?: return "Offline: \(what) waits and is sent when the server can be reached."
        case .unauthorized?: return "The server wants you to sign in again: \(what) waits until you do (`\(command) login`)."
        case .upgradeRequired?: return "This version of the app no longer syncs: \(what) waits on this device until you update the app."
        case .deviceStorage(let sentence)?: return "\(sentence). \(what.prefix(1).uppercased() + what.dropFirst()) is saved and waits to be sent once there is room."
        case let failure?: return "Not sent yet (\(failure.description)): \(what) waits for the next sync."
        case nil: return nil
        }
    }

    /// What a command that wrote says when the server refused something in the round it sent
    /// (its own change, or one that waited): the server's reason, what frees room when it is a
    /// quota, and how to settle it; nil when nothing was refused. Said instead of `waiting`: a
    /// refused change waits for no sync, only for the person.
    public func refused(_ what: String, after report: SyncReport, failures: [FailedChange]) -> String? {
        guard let refusal = report.rejections.first else { return nil }
        let reason = refusal.message.hasSuffix(".") ? String(refusal.message.dropLast()) : refusal.message
        let quota = failures.first { $0.id == refusal.entryID }?.code == SyncRuleViolation.quota
        let advice = quota ? quotaAdvice.map { ". " + $0 } ?? "" : ""
        let counted = report.rejected > 1 ? " and \(report.rejected - 1) more" : ""
        let settle = settling(changes: report.rejected - report.rejectedCalls, calls: report.rejectedCalls)
        return "The server refused \(what)\(counted): \(Terminal.oneLine(reason))\(advice). " + settle.prefix(1).uppercased() + settle.dropFirst() + "."
    }

    /// Why a sign-out was refused, and what clears each kind of unsent entry (`refusedCalls`: of
    /// the `refused`, those that are not a change of a record).
    public func unsent(waiting: Int, refused: Int, refusedCalls: Int = 0) -> CLIError {
        var parts: [String] = []
        if waiting > 0 { parts.append("\(count(waiting, "still waits", "still wait")) to be sent: run `\(command) sync` when online") }
        if refused > 0 {
            parts.append("\(count(refused, "was", "were")) refused by the server: "
                         + settling(changes: refused - refusedCalls, calls: refusedCalls) + ", or sign out with --discard-refused")
        }
        return CLIError(parts.joined(separator: "; ") + "; `\(command) logout --force` signs out and loses them all")
    }

    /// What to do with refused entries: "see `pantry failures`, then `pantry settle ID --keep-mine
    /// | --take-theirs | --discard`" for `changes` of records; a refused call (an invitation, a
    /// contribution), which `settle` does not take, is retried or discarded by its id in the status.
    public func settling(changes: Int, calls: Int) -> String {
        settling(changes: changes, calls: calls, retrying: "see `\(command) status`, then `\(command) retry ID` or `\(command) discard ID`")
    }

    private func settling(changes: Int, calls: Int, retrying: String) -> String {
        let settled = settlesCalls ? changes + calls : changes, other = settlesCalls ? 0 : calls
        let settle = "see `\(command) failures`, then `\(command) settle ID \(settleChoices)`"
        guard other > 0 else { return settle }
        return settled > 0 ? settle + "; for the others, " + retrying : retrying
    }

    /// The error of a refused change or entry sent again (settle --keep-mine, retry) that the
    /// server refused again: "The server refused the use of 2 of Eggs again: … (`pantry failures` lists it)".
    /// `id`: the id it is listed by now, when sending it again queued it anew (a kept change is
    /// stamped again, under a new id): said, so that the id the person typed is not a dead end.
    public func refusedAgain(_ what: String, reason: String, listedBy listing: String = "failures", id: String? = nil) -> CLIError {
        let reason = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
        let listed = id.map { " as \($0.suffix(OutboxEntry.shortIDLength))" } ?? ""
        return CLIError("The server refused the \(what) again: \(reason) (`\(command) \(listing)` lists it\(listed))")
    }

    /// Says what came of sending a refused entry again (`retry`): sent, waiting for the network,
    /// or refused again (an error: `status` lists it, as `failures` does not list refused calls).
    public func retried(_ what: String, _ outcome: RetryOutcome) throws -> String {
        switch outcome {
        case .refused(let reason): throw refusedAgain(what, reason: reason)
        case .waiting: return "The \(what) will be sent again with the next sync."
        case .sent: return "Sent the \(what) again: the server took it."
        }
    }

    /// Signs out with `signOut` and says so: "Signed out alice." and what the sign-out lost; a
    /// sign-out refused for what has not reached the server says what clears each kind.
    public func signOut(_ signOut: () async throws -> DeviceSignOut) async throws -> String {
        do {
            return signedOut(try await signOut())
        } catch SessionError.unsentChanges(let waiting, let refused, let refusedCalls) {
            throw unsent(waiting: waiting, refused: refused, refusedCalls: refusedCalls)
        } catch SessionError.otherAppsUnsent(let apps) {
            throw otherAppsUnsent(apps)
        }
    }

    /// Why a sign-out was refused for other apps given the same data folder: "pantry shares this
    /// data folder and its sign-in with sustainu (1 not yet on the server): …".
    public func otherAppsUnsent(_ apps: [String: Int]) -> CLIError {
        let commands = apps.map { (command: Self.command(ofDatabase: $0.key), count: $0.value) }.sorted { $0.command < $1.command }
        let listed = commands.map { "\($0.command) (\($0.count) not yet on the server)" }.joined(separator: " and ")
        let syncs = commands.map { "`\($0.command) sync`" }.joined(separator: " and ")
        return CLIError("\(command) shares this data folder and its sign-in with \(listed), and signing out removes their data too: "
                        + "run \(syncs) when online, or `\(command) logout --force` to sign out and lose it")
    }

    /// The command of an app by its database's name: "spendiq" for spending.sqlite.
    static func command(ofDatabase name: String) -> String { name == "spending" ? "spendiq" : name }

    /// "Signed out alice." and what the sign-out lost, and whether the server has heard of it.
    public func signedOut(_ outcome: DeviceSignOut) -> String {
        var line = "Signed out \(outcome.username)."
        if outcome.discardedWaiting > 0 { line += " " + count(outcome.discardedWaiting, "that was waiting to be sent is lost.", "that were waiting to be sent are lost.") }
        if outcome.discardedRefused > 0 { line += " " + count(outcome.discardedRefused, "the server refused was dropped.", "the server refused were dropped.") }
        if outcome.revocationQueued { line += " " + signOutQueued }
        return line
    }

    /// A sync's outcome: "Synced: `done`." (`done` says what went and came, in the app's words), or
    /// the error that says why it stopped or what the server refused, and what to do.
    /// What a sync says: "Synced: …" when everything went and nothing refused is left in
    /// `outbox`; otherwise an error naming what the person has to settle, this round's refusals
    /// or those of an earlier one still waiting.
    public func synced(_ report: SyncReport, done: String, outbox: Outbox) throws -> String {
        let line = try synced(report, done: done)
        let refused = try outbox.entries(state: .failed)
        // NB: never "Synced" while a refusal waits, however old: the person still has to act on it.
        guard refused.isEmpty else {
            let calls = refused.filter { $0.kind == .call }.count
            // NB: the server's reason whole: a sentence cut mid-word says less than none.
            let reason = refused.first?.lastError.map { " (" + Terminal.oneLine($0) + ")" } ?? ""
            throw CLIError("Sent what waited (\(done)), but \(count(refused.count, "refused earlier still waits", "refused earlier still wait"))"
                           + "\(reason): " + settling(changes: refused.count - calls, calls: calls))
        }
        // NB: a call waiting on another device (a photo it has still to upload) is not sent: say so.
        if report.deferredCalls > 0 {
            return line + " " + count(report.deferredCalls, "waits", "wait") + " for another device to send something first: `\(command) status` says what."
        }
        return line
    }

    public func synced(_ report: SyncReport, done: String) throws(CLIError) -> String {
        // NB: a change the server had already (a replay after a lost answer) was not sent now.
        if let failure = report.failure { throw stopped(failure, sentBefore: report.sent - report.duplicates + report.calls) }
        let clock = report.clockAheadBySeconds.map { Terminal.clockSentence(aheadBySeconds: $0) + " Changes are stamped by the server's time meanwhile." }
        // NB: never "Synced" when the server refused something: the person has to act on it.
        guard report.isComplete else {
            var parts = ["Sync incomplete (\(done))"]
            if report.rejected > 0 {
                let reason = report.rejections.first.map { " (" + Terminal.oneLine($0.message) + ")" } ?? ""
                parts.append("the server refused \(count(report.rejected))\(reason): "
                             + settling(changes: report.rejected - report.rejectedCalls, calls: report.rejectedCalls))
            }
            if report.clockRefused > 0 {
                parts.append("\(count(report.clockRefused)) refused as stamped ahead of the server's clock:"
                             + " check this device's date and time; they wait and are sent once it is right")
            }
            throw CLIError(parts.joined(separator: "; ") + (clock.map { ". " + $0 } ?? ""))
        }
        var line = "Synced: \(done)."
        if report.serverRestored {
            line += " The server had been restored from an earlier copy: this device sent back "
                + (report.sentBackAfterRestore == 0 ? "nothing (it held nothing)." : "the \(count(report.sentBackAfterRestore)) it held, so nothing is lost.")
        }
        if report.restamped > 0 { line += " " + count(report.restamped, "stamped by a clock ahead was stamped again and sent.", "stamped by a clock ahead were stamped again and sent.") }
        return line + (clock.map { " " + $0 } ?? "")
    }

    /// "Sync stopped: No connection to … (2 sent before); what waits stays on this device: try again later".
    public func stopped(_ failure: RemoteFailure, sentBefore: Int) -> CLIError {
        let next: String
        switch failure {
        case .unreachable, .transient: next = "; what waits stays on this device: try again later"
        case .deviceStorage: next = "; what waits stays on this device and is sent once there is room"
        case .upgradeRequired: next = "; what waits stays on this device and is sent once the app is updated"
        case .rejected, .unauthorized: next = ""
        }
        return CLIError("Sync stopped: \(failure.description)" + (sentBefore > 0 ? " (\(sentBefore) sent before)" : "") + next)
    }

    /// Whether the server refused the device's sign-in (401): nothing reaches it until the person
    /// signs in again online, though everything on the device still works.
    public static func mustSignInAgain(_ device: SignedInDevice) -> Bool { device.accounts.vault.accessToken == nil }

    /// What a status adds when the server refused the sign-in, naming the command that fixes it.
    public func signInAgain(_ device: SignedInDevice) -> String? {
        guard Self.mustSignInAgain(device) else { return nil }
        return "The server no longer accepts this device's sign-in: nothing is sent or fetched until you run "
            + "`\(command) login --email \(device.session.email)` (what is on this device works meanwhile)."
    }

    /// A status as text: online or offline, the counts and the last sync, the outbox, and what to
    /// do with refused entries.
    public func report(_ status: DeviceStatus, recordColumn: String? = nil) -> String {
        var lines = [Self.connectivity(status.connectivity), counts(status)]
        // NB: a command runs and ends: it syncs when it runs; a watch holds the live channel.
        if let watch { lines.append(Terminal.wrap("changes made elsewhere: live in `\(watch)`, else at each sync", width: Terminal.columns)) }
        if let firstSync = firstSync(status) { lines.append(Terminal.wrap(firstSync, width: Terminal.columns)) }
        if status.attachmentsWaiting.count > 0 {
            let (count, bytes) = status.attachmentsWaiting
            lines.append("\(count == 1 ? "1 attachment" : "\(count) attachments") (\(ByteCount.text(bytes))) to upload")
        }
        if !status.entries.isEmpty { lines.append(table(status.entries, recordColumn: recordColumn)) }
        if status.failed > 0 { lines.append(Terminal.wrap(refused(in: status), width: Terminal.columns)) }
        return lines.joined(separator: "\n")
    }

    /// Who is signed in: "alice <alice@example.com>", or the account in JSON.
    public static func account(_ account: DeviceAccount, json: Bool) throws -> String {
        json ? try Terminal.json(account) : "\(account.username) <\(account.email)>"
    }

    /// "online" in green, or "offline" in yellow.
    public static func connectivity(_ connectivity: Connectivity) -> String {
        connectivity == .online ? Terminal.paint("online", .green) : Terminal.paint("offline", .yellow)
    }

    /// "first sync 12,345 of 30,000 records (41%), running", while a first sync has still to
    /// come; "stopped" and how to go on when no page came in the last 10 seconds.
    public func firstSync(_ status: DeviceStatus, now: Int64 = UnixMillis.now()) -> String? {
        guard let progress = status.firstSyncUnderWay else { return nil }
        let total = max(progress.total, progress.received)
        let percent = total > 0 ? " (\(progress.received * 100 / total)%)" : ""
        let counted = total > 0 ? "\(FirstSyncBar.grouped(progress.received)) of \(FirstSyncBar.grouped(total)) records\(percent)"
            : "not started"
        let state = progress.updatedAt > 0 && now - progress.updatedAt < 10_000 ? "running"
            : "stopped; `\(command) sync` goes on from there"
        return "first sync \(counted), \(state)"
    }

    /// What `discard` says of a refused upload: which records no longer refer to its file (nil
    /// for another entry). "Dropped the refused upload of the photo of item Jam (49 KiB); item Jam
    /// no longer has a photo, here and on every device once `pantry sync` sends that."
    public func droppedUpload(_ line: OutboxLine) -> String? {
        guard let owners = line.upload else { return nil }
        let verb = owners.holders.count > 1 ? "no longer have" : "no longer has"
        let article = owners.field.first.map { "aeiou".contains($0) } == true ? "an" : "a"
        return "Dropped the refused upload: \(line.summary); \(owners.records) \(verb) \(article) \(owners.field), here and on every device"
            + " once `\(command) sync` sends that."
    }

    /// Said after a sign-in whose fetch of the person's records stopped before the end.
    public func fetchStopped(_ failure: RemoteFailure) -> String {
        "Fetching your records stopped before the end (\(failure)): `\(command) sync` goes on from where it stopped."
    }

    /// "pending 2, failed 1, last sync 3 minutes ago".
    public func counts(_ status: DeviceStatus) -> String {
        "pending \(status.pending), failed \(status.failed), " + LastSync.phrase(status.lastSyncAt)
    }

    /// The outbox as a table, refused entries first (they are the ones to act on), at most 50
    /// rows; `recordColumn` names a column of the record a change is about ("ITEM").
    public func table(_ entries: [OutboxLine], recordColumn: String? = nil) -> String {
        let ordered = entries.filter { $0.state == .failed } + entries.filter { $0.state != .failed }
        var table = Table()
        table.headers = ["STATE", "ID"] + (recordColumn.map { [$0] } ?? []) + ["WHAT", "TRIES", "REASON"]
        // NB: a cut id could not be retried or discarded.
        table.whole = ["STATE", "ID", "TRIES"]
        table.cutFirst = ["WHAT", "REASON"]
        for entry in ordered.prefix(Self.rows) {
            let record: [Table.Cell] = recordColumn == nil ? [] : [.init(entry.recordID.map { String($0.suffix(8)) } ?? "-")]
            table.rows.append([.init(entry.state.rawValue, entry.state == .failed ? .red : nil), .init(entry.shortID)] + record
                      + [.init(entry.summary), .init("\(entry.attempts)"), .init(entry.lastError ?? "-")])
        }
        let more = ordered.count > Self.rows ? "\n… and \(ordered.count - Self.rows) more (`\(command) status --json` lists them all)" : ""
        return table.render() + more
    }

    private static let rows = 50

    /// What to do with the refused entries of `status`, under a status that lists them.
    public func refused(in status: DeviceStatus) -> String {
        let calls = status.entries.filter { $0.state == .failed && $0.recordID == nil }.count
        let doing = settling(changes: max(0, status.failed - calls), calls: calls,
                             retrying: "`\(command) retry ID` sends one again, `\(command) discard ID` drops it")
        return "The server refused \(count(status.failed)): " + doing + "."
    }
}

/// An outbox entry in `--json`: every key present, `null` when unknown; `recordId` names the
/// record a change is about.
public struct OutboxLineJSON: Encodable {
    let id, shortId, state, what: String
    let attempts: Int
    /// The server's last refusal or the network's last failure, as `failures` calls it.
    @JSONNullable var reason: String?
    @JSONNullable var recordId: String?

    public init(_ line: OutboxLine) {
        id = line.id
        shortId = line.shortID
        state = line.state.rawValue
        what = line.summary
        attempts = line.attempts
        reason = line.lastError
        recordId = line.recordID
    }
}
