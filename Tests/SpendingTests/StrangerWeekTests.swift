@testable import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Testing
@testable import Spending

/// What a tester who saw only the docs found in a simulated week of spendiq, each as they typed it.
@Suite("spendiq after a stranger's week: full disks, whole amounts and ids, currencies, bank dates, usage mistakes", .timeLimit(.minutes(5)))
struct StrangerWeekTests {
    @Test(.tags(.endToEnd)) func aFullDiskOnStandardOutputIsOneLineNeverACrash() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            for index in 0..<30 { #expect(try await device.run(["add", "expense", "\(index + 1)", "--account", "Cash"]).status == 0) }
            // The export (written at once) and a list (printed) alike
            for arguments in [["export", "--csv", "-"], ["list"], ["list", "--json"]] {
                let full = try await device.run(arguments, stdoutTo: "/dev/full")
                #expect(full.status == 1 && full.stderr == "spendiq: Cannot write to standard output: the disk is full\n", "\(arguments): \(full.stderr)")
                #expect(!full.stderr.contains("Fatal error") && !full.stderr.contains(".swift"))
            }
            // Help too: it exited 0 on a full disk before, as if it had been read
            for arguments in [["--help"], ["add", "--help"], ["help", "accept"]] {
                let full = try await device.run(arguments, stdoutTo: "/dev/full")
                #expect(full.status == 1 && full.stderr == "spendiq: Cannot write to standard output: the disk is full\n", "\(arguments): \(full.stderr)")
            }
        }
    }

    @Test(.tags(.endToEnd)) func tablesNeverCutAmountsDatesOrIdsAndCutFreeTextFirst() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Main", "--currency", "EUR"]).status == 0)
            #expect(try await device.run(["accounts", "add", "Holiday", "--currency", "EUR"]).status == 0)
            #expect(try await device.run(["add", "income", "100000000.00", "--account", "Main", "--category", "salary",
                                          "--note", "a note long enough to fill whatever room the table has", "--date", "2026-11-20T14:30"]).status == 0)
            #expect(try await device.run(["transfer", "250", "--from", "Main", "--to", "Holiday",
                                          "--note", "for the summer, and a long note about it too"]).status == 0)
            let list = try await device.run(["list"])
            #expect(list.status == 0, "\(list.stderr)")
            let lines = list.stdout.split(separator: "\n")
            #expect(lines.allSatisfy { $0.count <= 80 }, "\(list.stdout)")
            #expect(list.stdout.contains("+EUR 100000000.00") && list.stdout.contains("2026-11-20 14:30"), "\(list.stdout)")
            #expect(list.stdout.contains("Main → Holiday"), "\(list.stdout)")
            #expect(list.stdout.contains("…"), "the notes give way: \(list.stdout)")
            // A status at 40 columns keeps the ids retry and discard take (changes waiting offline)
            let offline = ["SPENDIQ_SERVER": unreachableServer.absoluteString]
            #expect(try await device.run(["add", "expense", "1", "--account", "Main", "--note", "waits"], environment: offline).status == 0)
            let entries = try #require(try await device.run(["status", "--json"], environment: offline).json() as? [String: Any])
            let ids = try #require(entries["entries"] as? [[String: Any]]).filter { $0["attempts"] as? Int ?? 0 > 0 }.compactMap { $0["shortId"] as? String }
            let status = try await device.run(["status"], environment: offline.merging(["COLUMNS": "40"]) { $1 })
            #expect(!ids.isEmpty && ids.allSatisfy { status.stdout.contains($0) }, "\(ids) \(status.stdout)")
            #expect(status.stdout.split(separator: "\n").allSatisfy { $0.count <= 40 }, "\(status.stdout)")
        }
    }

    @Test func aTableCutsOnlyWhatMayBeCut() {
        var table = Table("ID", "NOTE", "AMOUNT", "ACCOUNT")
        table.whole = ["ID", "AMOUNT"]
        table.cutFirst = ["NOTE"]
        table.add("0a1b2c3d", String(repeating: "note ", count: 10), "EUR 100000000.00", "Main → Savings")
        let row = table.render(width: 60).split(separator: "\n")[1]
        #expect(row.count <= 60 && row.contains("0a1b2c3d") && row.contains("EUR 100000000.00") && row.contains("Main → Savings"), "\(row)")
        // Nothing marked: the widest column gives way first, as before (pantry and sustainu)
        #expect(Table.fitted([8, 50, 16, 14], into: 60) == [8, 16, 16, 14])
        #expect(Table.fitted([8, 50, 30, 14], into: 60) == [8, 16, 16, 14])
        #expect(Table.fitted([8, 50, 16, 14], into: 60, whole: [0, 2], first: [1]) == [8, 16, 16, 14])
        #expect(Table.fitted([8, 20, 16, 30], into: 60, whole: [0, 2], first: [1]) == [8, 4, 16, 26])
        // A line of whole columns may be wider than the terminal: a cut amount would be a wrong one
        #expect(Table.fitted([8, 20, 40], into: 30, whole: [0, 2]) == [8, 4, 40])
    }

    @Test(.tags(.endToEnd)) func currenciesAreNeverGuessedNorMadeUp() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Wallet", "--currency", "EUR"]).status == 0)
            // A code that is no currency
            for arguments in [["accounts", "add", "Bad", "--currency", "XYZ"], ["limits", "set", "--weekly", "10", "--currency", "XXX"]] {
                let refused = try await device.run(arguments)
                #expect(refused.isOneLineError && refused.status == 64 && refused.stderr.contains("is not a currency"), "\(arguments): \(refused.stderr)")
            }
            // A budget takes the one currency the accounts hold...
            let budget = try await device.run(["limits", "set", "--weekly", "120", "--category", "food"])
            #expect(budget.status == 0 && budget.stdout.contains("EUR 120.00"), "\(budget.stdout) \(budget.stderr)")
            let json = try #require(try await device.run(["limits", "--json"]).json() as? [[String: Any]])
            #expect(json.count == 1 && json[0]["category"] as? String == "food")
            // ...and asks when they hold several; an overdrawn card opens below zero
            let dollars = try await device.run(["accounts", "add", "Dollars", "--currency", "USD", "--opening", "-20"])
            #expect(dollars.status == 0 && dollars.stdout.contains("USD -20.00"), "\(dollars.stdout) \(dollars.stderr)")
            let several = try await device.run(["limits", "set", "--monthly", "500"])
            #expect(several.isOneLineError && several.status == 64 && several.stderr.contains("EUR and USD") && several.stderr.contains("--currency"),
                    "\(several.stderr)")
            #expect(try await device.run(["limits", "set", "--monthly", "500", "--currency", "usd"]).status == 0)
            let everything = try #require(try await device.run(["limits", "--json"]).json() as? [[String: Any]])
            #expect(everything.contains { $0.keys.contains("category") && $0["category"] is NSNull })
            // A symbol or code of another currency is refused; the account's own is taken
            for amount in ["$5", "USD 5", "5 £"] {
                let refused = try await device.run(["add", "expense", amount, "--account", "Wallet"])
                #expect(refused.isOneLineError && refused.status == 64 && refused.stderr.contains("EUR"), "\(amount): \(refused.stderr)")
            }
            for amount in ["€5", "EUR 5", "5 eur"] {
                let taken = try await device.run(["add", "expense", amount, "--account", "Wallet"])
                #expect(taken.status == 0 && taken.stdout.hasPrefix("Recorded expense EUR 5.00"), "\(amount): \(taken.stderr)")
            }
            #expect(try await device.run(["add", "expense", "$5", "--account", "Dollars"]).status == 0)
            // A negative amount is said as such, not as a missing argument
            #expect(try await device.run(["accounts", "add", "Purse", "--currency", "EUR"]).status == 0)
            for arguments in [["add", "expense", "-5", "--account", "Wallet"], ["transfer", "-5", "--from", "Wallet", "--to", "Purse"]] {
                let negative = try await device.run(arguments)
                #expect(negative.isOneLineError && negative.status == 64 && negative.stderr.contains("above zero"), "\(arguments): \(negative.stderr)")
            }
            #expect(try #require(try await device.run(["list", "--json"]).json() as? [Any]).count == 4)
        }
    }

    @Test(.tags(.endToEnd)) func aBankFileSaysItsDateOrderOnceAndNeverGuessesIt() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Bank", "--currency", "EUR"]).status == 0)
            func file(_ name: String, _ rows: [String]) throws -> String {
                let url = scratch.url.appendingPathComponent(name)
                try (["date,amount,description"] + rows).joined(separator: "\n").write(to: url, atomically: true, encoding: .utf8)
                return url.path
            }
            // Day first, told by 13/02: 01/02 is the 1st of February
            let dayFirst = try await device.run(["import", "--csv", try file("dmy.csv", ["01/02/2026,-5.00,bread", "13/02/2026,-7.00,milk"]), "--account", "Bank"])
            #expect(dayFirst.status == 0 && dayFirst.stdout.contains("dates day first") && dayFirst.stdout.contains("Imported 2"),
                    "\(dayFirst.stdout) \(dayFirst.stderr)")
            let dates = try #require(try await device.run(["list", "--json"]).json() as? [[String: Any]]).compactMap { $0["date"] as? String }
            #expect(dates.contains { $0.hasPrefix("2026-02-01") } && dates.contains { $0.hasPrefix("2026-02-13") }, "\(dates)")
            // Month first, told by 11/20
            let monthFirst = try await device.run(["import", "--csv", try file("mdy.csv", ["11/20/2026,-3.00,tea", "03/04/2026,-4.00,jam"]), "--account", "Bank"])
            #expect(monthFirst.status == 0 && monthFirst.stdout.contains("dates month first") && monthFirst.stdout.contains("Imported 2"),
                    "\(monthFirst.stdout) \(monthFirst.stderr)")
            let after = try #require(try await device.run(["list", "--json"]).json() as? [[String: Any]]).compactMap { $0["date"] as? String }
            #expect(after.contains { $0.hasPrefix("2026-03-04") } && after.contains { $0.hasPrefix("2026-11-20") }, "\(after)")
            // Never told: refused, and --dates settles it
            let untold = try file("untold.csv", ["01/02/2026,-1.00,a", "03/04/2026,-2.00,b"])
            let refused = try await device.run(["import", "--csv", untold, "--account", "Bank"])
            #expect(refused.isOneLineError && refused.stderr.contains("--dates"), "\(refused.stderr)")
            let settled = try await device.run(["import", "--csv", untold, "--account", "Bank", "--dates", "mdy"])
            #expect(settled.status == 0 && settled.stdout.contains("Imported 2"), "\(settled.stderr)")
            // Standard input, as export writes standard output
            let piped = try await device.run(["import", "--csv", "-", "--account", "Bank"], input: "date,amount,description\n2026-05-01,\"-9,50\",cheese\n")
            #expect(piped.status == 0 && piped.stdout.contains("standard input") && piped.stdout.contains("Imported 1"), "\(piped.stdout) \(piped.stderr)")
            // A wrong --decimal reads no row: no success, one line that says why, in a bank file's terms
            let wrong = try await device.run(["import", "--csv", try file("comma.csv", ["2026-05-02,\"-12,50\",x", "2026-05-03,\"-13,50\",y"]),
                                              "--account", "Bank", "--decimal", "."])
            #expect(wrong.isOneLineError && wrong.status == 1 && wrong.stderr.contains("Imported nothing") && !wrong.stderr.contains("above zero"),
                    "\(wrong.stdout) \(wrong.stderr)")
            // A row in the future is skipped, without suggesting "today or yesterday"
            let future = try await device.run(["import", "--csv", try file("future.csv", ["2026-05-04,-1.00,ok", "2099-01-01,-2.00,later"]), "--account", "Bank"])
            #expect(future.status == 0 && future.stdout.contains("1 skipped") && future.stdout.contains("future") && !future.stdout.contains("yesterday"),
                    "\(future.stdout) \(future.stderr)")
        }
    }

    @Test(.tags(.endToEnd)) func usageMistakesExit64AndReadsCreateNothing() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Wallet", "--currency", "EUR"]).status == 0)
            #expect(try await device.run(["accounts", "add", "Savings", "--currency", "EUR"]).status == 0)
            for (arguments, environment) in [
                (["--server", "notaurl", "list"], [:]), (["list", "--server", "ftp://x"], [:]), (["--server", "", "status"], [:]),
                (["list"], ["SPENDIQ_ANSWER_TIMEOUT": "abc"]), (["delete", ""], [:]), (["export", "--csv", ""], [:]), (["help", "bogus"], [:]),
                (["add", "expense", "3", "--account", "Wallet", "--date", "9999-12-31"], [:]),
                (["add", "expense", "3", "--account", "Wallet", "--date", "1900-01-01"], [:]),
                (["accounts", "edit", "Wallet", "--colour", "not a colour"], [:]),
            ] as [([String], [String: String])] {
                let outcome = try await device.run(arguments, environment: environment)
                #expect(outcome.isOneLineError && outcome.status == 64, "\(arguments): \(outcome.status) \(outcome.stdout) \(outcome.stderr)")
                #expect(!outcome.stderr.contains("No transaction :"), "\(outcome.stderr)")
            }
            let future = try await device.run(["add", "expense", "3", "--account", "Wallet", "--date", "9999-12-31"])
            #expect(future.stderr.contains("in the future"), "\(future.stderr)")
            let old = try await device.run(["add", "expense", "3", "--account", "Wallet", "--date", "1900-01-01"])
            #expect(old.stderr.contains("out of range") && old.stderr.contains("1970"), "\(old.stderr)")
            // ISO 8601 with a zone
            #expect(try await device.run(["add", "expense", "3", "--account", "Wallet", "--date", "2026-11-20T14:30Z"]).status == 0)
            #expect(try await device.run(["add", "expense", "4", "--account", "Wallet", "--date", "2026-11-20T14:30+05:00"]).status == 0)
            let dates = try #require(try await device.run(["list", "--json"]).json() as? [[String: Any]]).compactMap { $0["date"] as? String }
            #expect(Set(dates) == ["2026-11-20T14:30:00Z", "2026-11-20T09:30:00Z"], "\(dates)")
            // A transfer has no category; a known colour is taken
            let moved = try await device.run(["transfer", "5", "--from", "Wallet", "--to", "Savings"])
            let id = try #require(moved.stdout.split(separator: "(").last?.prefix(8))
            let category = try await device.run(["edit", String(id), "--category", "food"])
            #expect(category.isOneLineError && category.status == 64 && category.stderr.contains("transfer has no category"), "\(category.stderr)")
            #expect(try await device.run(["accounts", "edit", "Wallet", "--colour", "Green"]).status == 0)
            // Registration's refusals are the person's typing: 64, in a sentence
            let other = CommandProcess.spendiq(dataDirectory: scratch.folder("other"), server: server)
            let short = try await other.run(["register", "--username", "someone", "--email", "someone@example.com", "--password-stdin"], input: "short\n")
            #expect(short.isOneLineError && short.status == 64 && short.stderr.hasPrefix("spendiq: Password"), "\(short.stderr)")
            let email = try await other.run(["register", "--username", "someone", "--email", "not-an-email", "--password-stdin"], input: "long-password\n")
            #expect(email.isOneLineError && email.status == 64 && email.stderr.hasPrefix("spendiq: Email"), "\(email.stderr)")
            // A code copied with a space in it is taken
            let registered = try await other.run(["register", "--username", "spaced", "--email", "spaced@example.com", "--password-stdin"], input: "long-password\n")
            #expect(registered.status == 0, "\(registered.stderr)")
            let code = try mailedCode(scratch, to: "spaced@example.com")
            let verified = try await other.run(["verify", code.prefix(3) + " " + code.dropFirst(3)])
            #expect(verified.status == 0, "\(verified.stderr)")
            // A read-only command with nobody signed in creates no folder
            let missing = scratch.url.appendingPathComponent("nonexistent/x")
            for arguments in [["whoami"], ["status"], ["list"], ["accounts"]] {
                let nobody = try await device.run(["--data-dir", missing.path] + arguments)
                #expect(nobody.isOneLineError && nobody.stderr.contains("Not signed in"), "\(arguments): \(nobody.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: missing.deletingLastPathComponent().path))
        }
    }

    @Test(.tags(.endToEnd)) func twoAccountsOfOneNameArePickedByTheirIds() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Travel", "--currency", "EUR"]).status == 0)
            #expect(try await device.run(["accounts", "add", "Home", "--currency", "EUR"]).status == 0)
            // Given a second "Travel", as another device opened offline
            let spending = try await spendingDevice(device.dataDirectory, server: unreachableServer).open()
            let twin = SpendingAccount(id: UUIDv7.make(), name: "Travel", kind: .cash, currency: "EUR", colour: nil, openingBalanceMinor: 0,
                                       createdAt: UnixMillis.now())
            try await spending.store.write { tx in
                try SpendingSchema.accounts.insert(twin, in: tx)
            }
            let ambiguous = try await device.run(["add", "expense", "3", "--account", "Travel"])
            let shortID = String(twin.id.suffix(8))
            #expect(ambiguous.isOneLineError && ambiguous.stderr.contains("8-character id") && ambiguous.stderr.contains(shortID), "\(ambiguous.stderr)")
            // The id is taken wherever an account is named
            let bank = scratch.url.appendingPathComponent("bank.csv")
            try "date,amount,description\n2026-05-01,-1.00,x\n".write(to: bank, atomically: true, encoding: .utf8)
            for arguments in [["add", "expense", "3", "--account", shortID], ["transfer", "2", "--from", "Home", "--to", shortID],
                              ["list", "--account", shortID], ["import", "--csv", bank.path, "--account", shortID],
                              ["accounts", "edit", shortID, "--name", "Travel 2"], ["accounts", "archive", shortID]] {
                let outcome = try await device.run(arguments)
                #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
            }
        }
    }

    @Test(.tags(.endToEnd)) func anOfferOfTheLastListIsShownWhereverThatListWas() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            let list = try #require(try await device.run(["offers", "--near", "43.7394,7.4278", "--json"]).json() as? [String: Any])
            let first = try #require((list["offers"] as? [[String: Any]])?.first?["id"] as? String)
            let shown = try await device.run(["offers", "show", String(first.suffix(8))])
            #expect(shown.status == 0 && !shown.stdout.isEmpty, "\(shown.stderr)")
            let help = try await device.run(["offers", "list", "--help"])
            #expect(help.stdout.contains("(default: 200)") && !help.stdout.contains("(default 200)"), "\(help.stdout)")
        }
    }

    @Test(.tags(.endToEnd)) func anOpeningBalanceMayBeNegativeHoweverItIsTyped() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            let forms: [[String]] = [
                ["accounts", "add", "Card", "--opening", "-5", "--currency", "EUR"],
                ["accounts", "add", "Loan", "--currency", "EUR", "--opening=-5"],
                ["accounts", "add", "--opening", "-5", "Overdraft", "--currency", "EUR"],
                ["accounts", "add", "Debt", "--currency", "EUR", "--opening", "-5.50"],
                ["accounts", "add", "Tab", "--currency", "EUR", "--opening", "(5)"],
                ["accounts", "add", "Minus", "--currency", "EUR", "--opening", "−5"],
            ]
            for arguments in forms {
                let added = try await device.run(arguments)
                #expect(added.status == 0 && added.stdout.contains("EUR -5"), "\(arguments): \(added.stdout)\(added.stderr)")
            }
            // And a mistyped option's suggestion ends its own sentence
            let typo = try await device.run(["accounts", "add", "Red", "--currency", "EUR", "--color", "red"])
            #expect(typo.isOneLineError && typo.status == 64 && typo.stderr.contains("Did you mean '--colour'? See"), "\(typo.stderr)")
        }
    }

    @Test(.tags(.endToEnd)) func theDashboardLinesUpNamesInAnyScript() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            // Given accounts and categories named in Japanese, with an emoji, and in Latin letters
            for name in ["家計 🏦", "Cash"] { #expect(try await device.run(["accounts", "add", name, "--currency", "EUR"]).status == 0) }
            for (category, account) in [("食費", "家計 🏦"), ("rent", "Cash")] {
                #expect(try await device.run(["add", "expense", "5", "--account", account, "--category", category]).status == 0)
            }
            // When the dashboard is shown
            let dashboard = try await device.run(["dashboard"], environment: ["COLUMNS": "80"])
            // Then the amounts of each section start at the same terminal column
            let lines = dashboard.stdout.split(separator: "\n").map(String.init)
            for names in [["家計 🏦", "Cash"], ["食費", "rent"]] {
                let columns = try names.map { name -> Int in
                    let line = try #require(lines.first { $0.hasPrefix("  " + name) }, "\(dashboard.stdout)")
                    let amount = try #require(line.range(of: "EUR")).lowerBound
                    return DisplayWidth.of(String(line[..<amount]))
                }
                #expect(Set(columns).count == 1, "\(dashboard.stdout)")
            }
        }
    }

    @Test(.tags(.endToEnd)) func statusSaysWhenTheServerRefusedTheSignIn() async throws {
        try await withLiveServer { server, scratch in
            let device = try await CommandLineTests.signedIn(server, scratch)
            #expect(try await device.run(["accounts", "add", "Cash", "--currency", "EUR"]).status == 0)
            // Given a token the server no longer takes
            let token = try #require(try await spendingDevice(scratch.folder("cli"), server: server).open().device.accounts.vault.accessToken)
            let link = ServerLink(serverURL: server, timeouts: .patient) { token }
            guard case .noContent = try await link.client.logout() else { throw TestFailure("logout") }
            // When a sync is refused with 401
            #expect(try await device.run(["add", "expense", "5", "--account", "Cash"]).status == 0)
            #expect(try await device.run(["sync"]).status == 1)
            // Then status says to sign in again online
            let status = try await device.run(["status"])
            #expect(status.stdout.contains("until you run `spendiq login --email"), "\(status.stdout)")
        }
    }
}
