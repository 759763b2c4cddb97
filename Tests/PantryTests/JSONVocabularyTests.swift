import Foundation
import Testing
@testable import Pantry

/// One idea has one JSON key in the three apps (docs/json.md): the same person, signed in to
/// `pantry`, `spendiq` and `sustainu`, reads the same keys from each for their status, their
/// account and an answer of the server's, online and from a saved copy.
@Suite("One JSON vocabulary in the three apps", .timeLimit(.minutes(4)), .tags(.endToEnd))
struct JSONVocabularyTests {
    /// The keys every app's `status --json` prints, and each outbox entry's.
    static let statusKeys: Set = ["connectivity", "pending", "failed", "lastSyncAt", "signOutsWaiting", "mustSignInAgain",
                                  "firstSync", "attachmentsWaiting", "entries"]
    static let entryKeys: Set = ["id", "shortId", "state", "what", "attempts", "reason", "recordId"]
    /// The keys last round's apps spelled one idea with, each in one app only.
    static let retired: Set = ["stale", "fresh", "itemId", "recordedBy", "summary", "lastError"]

    @Test func theThreeAppsSayOneIdeaWithOneKey() async throws {
        try await withLiveServer { server, scratch in
            // Given one account signed in to the three apps
            let (pantry, spendiq, sustainu, email, username) = try await Self.signedInToThreeApps(server, scratch)
            let apps = [pantry, spendiq, sustainu]

            // And something of each waiting on its device, written in a basement
            #expect(try await pantry.run(["add", "--name", "Rice"], server: unreachableServer).status == 0)
            #expect(try await spendiq.run(["accounts", "add", "Cash", "--currency", "EUR"], server: unreachableServer).status == 0)
            let scan = try await sustainu.run(["scan", "--barcode", "4006381333931"], server: unreachableServer)
            #expect(scan.status == 0, "\(scan.stderr)")

            var printed: [String: Any] = [:]
            for app in apps {
                // Then each status has the keys every app prints, and each waiting entry the same keys
                let status = try #require(try await app.run(["status", "--json"], server: unreachableServer).json() as? [String: Any], "\(app.name)")
                #expect(Self.statusKeys.isSubset(of: Set(status.keys)), "\(app.name): \(status.keys.sorted())")
                let entries = try #require(status["entries"] as? [[String: Any]], "\(app.name)")
                #expect(!entries.isEmpty && entries.allSatisfy { Set($0.keys) == Self.entryKeys }, "\(app.name): \(entries)")
                // And each says who is signed in with the same keys
                let whoami = try #require(try await app.run(["whoami", "--json"]).json() as? [String: Any], "\(app.name)")
                #expect(whoami["username"] as? String == username && whoami["email"] as? String == email, "\(app.name): \(whoami)")
                let failures = try #require(try await app.run(["failures", "--json"]).json() as? [Any], "\(app.name)")
                #expect(failures.isEmpty, "\(app.name): \(failures)")
                printed[app.name + " status"] = status
                printed[app.name + " whoami"] = whoami
            }
            #expect(Set(printed.compactMap { $0.key.hasSuffix("whoami") ? Set(($0.value as! [String: Any]).keys) : nil }).count == 1)

            // And an answer of the server's says the same two things in each app: whether it is a
            // saved copy, and when the device had it from the server; online, then from the copy
            let reads = [(pantry, ["household", "invitations", "--json"]), (spendiq, ["invitations", "--json"]), (sustainu, ["leaderboard", "--json"])]
            for (app, arguments) in reads {
                for (basement, savedCopy) in [(false, false), (true, true)] {
                    let answer = try await app.run(arguments, server: basement ? unreachableServer : nil)
                    let object = try #require(try answer.json() as? [String: Any], "\(app.name) \(arguments): \(answer.stderr)")
                    #expect(object["savedCopy"] as? Bool == savedCopy && object["fetchedAt"] is String, "\(app.name) \(arguments): \(object.keys.sorted())")
                    printed["\(app.name) \(arguments) \(basement)"] = object
                }
            }

            // And each app's records carry their short id beside their id, as docs/json.md says (issue 46, item 17)
            for (app, arguments) in [(pantry, ["list", "--json"]), (spendiq, ["list", "--json"]), (sustainu, ["scans", "--json"])] {
                let listed = try await app.run(arguments, server: unreachableServer)
                let records = try #require(try listed.json() as? [[String: Any]], "\(app.name) \(arguments): \(listed.stderr)")
                for record in records {
                    let id = try #require(record["id"] as? String, "\(app.name): \(record)")
                    #expect(record["shortId"] as? String == String(id.suffix(8)), "\(app.name): \(record.keys.sorted())")
                }
                printed["\(app.name) \(arguments)"] = records
            }
            // NB: spendiq's list holds a transaction only once one is recorded: one, in the basement too.
            #expect(try await spendiq.run(["add", "expense", "3", "--account", "Cash"], server: unreachableServer).status == 0)
            let transactions = try #require(try await spendiq.run(["list", "--json"], server: unreachableServer).json() as? [[String: Any]])
            #expect(transactions.count == 1 && transactions.allSatisfy { ($0["shortId"] as? String)?.count == 8 }, "\(transactions)")

            // And no app prints a key last round's apps spelled one idea with
            let used = printed.values.reduce(into: Set<String>()) { keys, value in Self.collectKeys(value, into: &keys) }
            #expect(used.isDisjoint(with: Self.retired), "\(used.intersection(Self.retired))")
        }
    }

    /// One account signed in to `pantry`, `spendiq` and `sustainu` (spendiq's sign-up confirms the email).
    static func signedInToThreeApps(_ server: URL, _ scratch: ScratchFolder) async throws
        -> (pantry: CommandProcess, spendiq: CommandProcess, sustainu: CommandProcess, email: String, username: String) {
        let spendiq = CommandProcess.spendiq(dataDirectory: scratch.folder("spendiq"), server: server)
        let pantry = CommandProcess.pantry(dataDirectory: scratch.folder("pantry"), server: server)
        let sustainu = CommandProcess("sustainu", dataDirectory: scratch.folder("sustainu"), server: server)
        let (email, username) = try await spendiq.signUp(name: "three") { email in
            let verified = try await spendiq.run(["verify", try mailedCode(scratch, to: email)])
            #expect(verified.status == 0, "\(verified.stderr)")
        }
        for app in [pantry, sustainu] {
            let login = try await app.run(["login", "--email", email, "--password-stdin"], input: "long-password\n")
            #expect(login.status == 0 && login.stdout.contains("Signed in as \(username)."), "\(app.name): \(login.stderr)")
        }
        return (pantry, spendiq, sustainu, email, username)
    }

    /// Every key of every object in a JSON value.
    static func collectKeys(_ value: Any, into keys: inout Set<String>) {
        if let object = value as? [String: Any] {
            keys.formUnion(object.keys)
            for child in object.values { collectKeys(child, into: &keys) }
        } else if let array = value as? [Any] {
            for child in array { collectKeys(child, into: &keys) }
        }
    }
}
