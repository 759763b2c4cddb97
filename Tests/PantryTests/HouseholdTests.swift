import Foundation
import Testing

/// A household's pantry through the real `pantry` command and a real server: two people's uses
/// of the same item both count, a viewer's use is refused and shown, and a removed person keeps
/// only their own items.
@Suite("Households: a pantry shared offline", .timeLimit(.minutes(6)), .tags(.endToEnd))
struct HouseholdTests {
    @Test(arguments: Backend.available, [true, false])
    func twoPeopleOfflineEachUseOneOfThreeAndBothSeeOneLeft(backend: Backend, annSyncsFirst: Bool) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Given Ann and Bob in one household, with 3 yoghurts in it on both devices
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob)
            let added = try await ann.run(["add", "--name", "Yoghurt", "--quantity", "3", "--household", "Home"])
            #expect(added.stdout.contains("to Home."), "\(added.stdout)")
            try await ann.run(["sync"])
            try await bob.run(["sync"])
            let id = try await bob.itemID("Yoghurt")

            // When both, offline, use one
            for person in [ann, bob] {
                let used = try await person.run(["consume", String(id.suffix(8)), "--quantity", "1"], server: unreachableServer)
                #expect(used.stdout.contains("Yoghurt: 2 left."), "\(used.stdout)")
            }
            // And sync in either order, then once more each
            let order = annSyncsFirst ? [ann, bob, ann, bob] : [bob, ann, bob, ann]
            for person in order { try await person.run(["sync"]) }

            // Then both devices show one left, and who made the newest change: Bob, who used his after Ann,
            // whichever of them synced last
            for person in [ann, bob] {
                let yoghurt = try #require(try await person.items().first { $0["name"] as? String == "Yoghurt" })
                #expect(yoghurt["quantity"] as? Double == 1, "\(person.username): \(yoghurt)")
                #expect(yoghurt["space"] as? String == "Home")
                #expect(yoghurt["changedBy"] as? String == bob.username, "\(yoghurt)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func aViewersUseIsRefusedWithTheReasonInTheStatus(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Given Bob, an editor of Ann's household, who sees its milk
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob, role: "editor")
            try await ann.run(["add", "--name", "Milk", "--quantity", "2", "--household", "Home"])
            try await ann.run(["sync"])
            try await bob.run(["sync"])
            let milk = String(try await bob.itemID("Milk").suffix(8))

            // When Ann makes him a viewer, and he uses some of the milk before his device hears of it
            try await ann.run(["household", "role", bob.username, "viewer"])
            try await ann.run(["sync"])
            try await bob.run(["consume", milk, "--quantity", "1"])
            try await bob.pantry.run(["sync"])

            // Then the status shows the change failed, with the server's reason naming the household and the role
            let status = try jsonObject(try await bob.run(["status", "--json"]))
            #expect(status["failed"] as? Int == 1, "\(status)")
            let entries = try #require(status["entries"] as? [[String: Any]])
            let reason = try #require(entries.first { $0["state"] as? String == "failed" }?["reason"] as? String, "\(entries)")
            #expect(reason.contains("Home") && reason.contains("viewer"), "\(reason)")
            let text = try await bob.run(["status"])
            #expect(text.stdout.contains("Home") && text.stdout.contains("viewer"), "\(text.stdout)")

            // And now that his device knows he is a viewer, every change to the household is refused
            // on it, in one line, with nothing queued
            for attempt in [["add", "--name", "Jam", "--household", "Home"], ["household", "use", "Home"],
                            ["consume", milk, "--quantity", "1"], ["edit", milk, "--category", "dairy"], ["remove", milk]] {
                let refused = try await bob.pantry.run(attempt)
                #expect(refused.isOneLineError && refused.status == 1 && refused.stderr.contains("viewer"),
                        "pantry \(attempt.joined(separator: " ")): \(refused.stderr)")
            }
            let after = try jsonObject(try await bob.run(["status", "--json"]))
            #expect(after["pending"] as? Int == 0 && after["failed"] as? Int == 1, "\(after)")
            // And Ann's milk is untouched
            try await ann.run(["sync"])
            #expect(try await ann.items().first { $0["name"] as? String == "Milk" }?["quantity"] as? Double == 2)
        }
    }

    @Test(arguments: Backend.available)
    func aRemovedPersonKeepsOnlyTheirOwnItemsAfterTheirNextSync(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Given Bob in Ann's household, with its rice and his own jam on his device
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob)
            try await ann.run(["household", "use", "Home"])
            #expect(try await ann.run(["add", "--name", "Rice"]).stdout.contains("Added Rice") )
            try await bob.run(["add", "--name", "Jam"])
            try await ann.run(["sync"])
            try await bob.run(["sync"])
            #expect(Set(try await bob.items().compactMap { $0["name"] as? String }) == ["Rice", "Jam"])
            let rice = try await bob.itemID("Rice")

            // When Ann removes him while he, offline, uses some rice
            let removed = try await ann.run(["household", "remove", bob.username])
            #expect(removed.stdout.contains("Removed \(bob.username) from Home."), "\(removed.stdout)")
            try await bob.run(["consume", String(rice.suffix(8)), "--quantity", "0.5"], server: unreachableServer)
            let sync = try await bob.pantry.run(["sync"])
            #expect(sync.isOneLineError && sync.stderr.contains("You are no longer a member of Home"), "\(sync.stderr)")

            // Then his list has his jam only, and his waiting use failed with the reason
            let items = try await bob.items()
            #expect(items.compactMap { $0["name"] as? String } == ["Jam"], "\(items)")
            #expect(items.first?["space"] is NSNull)
            let status = try jsonObject(try await bob.run(["status", "--json"]))
            let entries = try #require(status["entries"] as? [[String: Any]])
            #expect(entries.contains { ($0["reason"] as? String)?.contains("no longer a member of Home") == true }, "\(entries)")
            let households = try await bob.run(["household", "list", "--json"])
            #expect((try households.json() as? [Any])?.isEmpty == true, "\(households.stdout)")
            // And Ann's list still has the rice
            #expect(try await ann.items().contains { $0["name"] as? String == "Rice" })
        }
    }

    @Test func theListSaysWhoseEachItemIsAndWhoChangedItInEightyColumns() async throws {
        try await withLiveServer { server, scratch in
            // Given Ann alone: her list has no SPACE column
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await ann.run(["add", "--name", "Jam", "--expires", "+1d", "--category", "breakfast", "--where", "Coop, Via Roma 1"])
            #expect(!(try await ann.run(["list"])).stdout.contains("SPACE"))
            // When she shares a household with Bob, who adds an item expiring tomorrow
            try await household(ann: ann, bob: bob)
            try await bob.run(["add", "--name", "Greek yoghurt with honey and walnuts", "--expires", "+1d", "--household", "Home",
                               "--category", "dairy products", "--where", "The big supermarket on the corner"])
            try await bob.run(["sync"])
            try await ann.run(["sync"])

            // Then her list, 80 columns wide, says whose each item is and who changed it
            let list = try await ann.pantry.run(["list"], environment: ["COLUMNS": "80"])
            let lines = list.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.contains("SPACE") == true && lines.first?.contains("BY") == true, "\(list.stdout)")
            #expect(lines.allSatisfy { $0.count <= 80 }, "\(list.stdout)")
            #expect(lines.contains { $0.contains("Home") && $0.contains(bob.username.prefix(4)) }, "\(list.stdout)")
            #expect(lines.contains { $0.contains("Jam") && $0.contains("yours") && $0.hasSuffix("you") }, "\(list.stdout)")
            // And the reminders cover the household's item too
            let reminders = try jsonObject(try await ann.run(["reminders", "--json"]))
            let soon = try #require(reminders["expiringSoon"] as? [[String: Any]])
            #expect(Set(soon.compactMap { $0["name"] as? String }) == ["Jam", "Greek yoghurt with honey and walnuts"], "\(soon)")
            #expect(soon.contains { $0["space"] as? String == "Home" && $0["changedBy"] as? String == bob.username })
            // And the members are listed, as JSON too
            let members = try jsonObject(try await ann.run(["household", "members", "Home", "--json"]))
            let names = (members["members"] as? [[String: Any]])?.compactMap { $0["username"] as? String } ?? []
            #expect(Set(names) == [ann.username, bob.username] && members["owner"] as? String == ann.username, "\(members)")
        }
    }

    @Test func membershipChangesWorkOfflineAndSayTheyWait() async throws {
        try await withLiveServer { server, scratch in
            // Given Ann, offline
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            // When she creates a household and adds to it
            let created = try await ann.run(["household", "create", "Home"], server: unreachableServer)
            let said = created.stdout.replacingOccurrences(of: "\n", with: " ")
            #expect(said.contains("queued; it reaches the server at the next sync (offline now)"), "\(created.stdout)")
            try await ann.run(["add", "--name", "Bread", "--household", "Home"], server: unreachableServer)
            let invited = try await ann.run(["household", "invite", "someone@example.com"], server: unreachableServer)
            #expect(invited.stdout.contains("queued"), "\(invited.stdout)")
            // Then one sync takes them all to the server, in order, and counts them as what they are
            let synced = try await ann.run(["sync"])
            #expect(synced.stdout.replacingOccurrences(of: "\n", with: " ")
                .contains("sent 1 change(s) and 0 knowledge-base contribution(s), 2 household change(s)"), "\(synced.stdout)")
            let status = try jsonObject(try await ann.run(["status", "--json"]))
            #expect(status["pending"] as? Int == 0 && status["failed"] as? Int == 0, "\(status)")
            let members = try jsonObject(try await ann.run(["household", "members", "--json"]))
            #expect(members["space"] as? String == "Home" && members["spaceId"] is String && members["savedCopy"] as? Bool == false, "\(members)")
        }
    }

    @Test func anOwnerHandsTheHouseholdOverThenLeavesAndARefusedInvitationIsDroppedOnceSaid() async throws {
        try await withLiveServer { server, scratch in
            // Given Ann's household with Bob in it
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob)
            // When she invites someone who does not exist, or leaves while she owns it: refused, in the server's words
            let nobody = try await ann.pantry.run(["household", "invite", "nobody_\(bob.username)"])
            // (said now, the refused invitation is dropped: no later sync fails for it)
            #expect(nobody.isOneLineError && nobody.stderr.contains("The server refused it") && nobody.stderr.contains("nothing of it waits"),
                    "\(nobody.stderr)")
            let leave = try await ann.pantry.run(["household", "leave", "Home"])
            // NB: exit 1, a refusal, as the guide says; not 64, a usage mistake (issue 46's week)
            #expect(leave.isOneLineError && leave.status == 1 && leave.stderr.contains("You own Home"), "\(leave.stderr)")
            // When she hands it over to Bob, then leaves
            let handed = try await ann.run(["household", "role", bob.username, "owner", "--in", "Home"])
            #expect(handed.stdout.contains("Handed Home over to \(bob.username)"), "\(handed.stdout)")
            let left = try await ann.run(["household", "leave"])
            #expect(left.stdout.contains("Left Home"), "\(left.stdout)")
            // Then Bob owns it alone
            let members = try jsonObject(try await bob.run(["household", "members", "--json"]))
            #expect(members["owner"] as? String == bob.username && (members["members"] as? [Any])?.count == 1, "\(members)")
        }
    }

    @Test func everyMembersDeviceNamesTheSameOwnerAndWhatTheServerWouldRefuseIsRefusedOnTheDevice() async throws {
        try await withLiveServer { server, scratch in
            // Given Ann's household with Bob in it, and Bob's second device, which never listed the members
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob)
            try await bob.run(["sync"])
            try await ann.run(["sync"])
            let whoami = try jsonObject(try await bob.run(["whoami", "--json"]))
            let second = CommandProcess.pantry(dataDirectory: scratch.folder("bob-2"), server: server)
            let login = try await second.run(["login", "--email", try #require(whoami["email"] as? String), "--password-stdin"], input: "long-password\n")
            #expect(login.status == 0, "\(login.stderr)")
            // Then every device of every member names Ann as the owner
            for device in [ann.pantry, bob.pantry, second] {
                let listed = try await device.run(["household", "--json"])
                let homes = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed.stdout)")
                #expect(homes.map { $0["owner"] as? String } == [ann.username], "\(listed.stdout)")
            }
            // And offline, the device that never listed them says who is in Home, as its last sync heard
            let offline = try await second.run(["household", "members", "Home", "--json"], server: unreachableServer)
            let heard = try #require(try JSONSerialization.jsonObject(with: Data(offline.stdout.utf8)) as? [String: Any], "\(offline.stderr)")
            #expect(Set((heard["members"] as? [[String: Any]])?.compactMap { $0["username"] as? String } ?? []) == [ann.username, bob.username]
                    && heard["owner"] as? String == ann.username && heard["savedCopy"] as? Bool == true, "\(offline.stdout)")
            let table = try await second.run(["household"], server: unreachableServer)
            #expect(table.stdout.split(separator: "\n").contains { $0.hasPrefix("Home") && $0.contains(ann.username) }, "\(table.stdout)")

            // When Bob, not the owner, or Ann, about someone not in it, changes who is in Home: refused on the device, nothing queued
            let notOwner = try await bob.pantry.run(["household", "remove", ann.username, "--from", "Home"])
            #expect(notOwner.isOneLineError && notOwner.stderr.contains("Only the owner of Home (\(ann.username))"), "\(notOwner.stderr)")
            let stranger = try await ann.pantry.run(["household", "role", "zed_nobody", "viewer", "--in", "Home"])
            #expect(stranger.isOneLineError && stranger.stderr.contains("zed_nobody is not in Home"), "\(stranger.stderr)")
            let ownerLeaves = try await ann.pantry.run(["household", "leave", "Home"])
            #expect(ownerLeaves.isOneLineError && ownerLeaves.stderr.contains("pantry household role \(bob.username) owner"), "\(ownerLeaves.stderr)")
            for person in [ann, bob] {
                let status = try jsonObject(try await person.run(["status", "--json"]))
                #expect(status["failed"] as? Int == 0, "\(status)")
                let queued = (status["entries"] as? [[String: Any]] ?? []).compactMap { $0["what"] as? String }
                #expect(!queued.contains { $0.contains("leaving") || $0.contains("removal") || $0.contains(" made ") }, "\(status)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func removalTakesTheHouseholdsPhotosAwayAndAnItemAddedBeforeCanBeKeptAsOnesOwn(backend: Backend) async throws {
        try await withLiveServer(on: backend) { server, scratch in
            // Given Bob in Ann's household, with the photo of its jam downloaded to his device
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            try await household(ann: ann, bob: bob)
            var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            png.append(Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 3) }))
            let file = scratch.url.appendingPathComponent("jam.png")
            try png.write(to: file)
            try await ann.run(["add", "--name", "Jam", "--household", "Home", "--photo", file.path])
            try await ann.run(["sync"])
            try await bob.run(["sync"])
            let jam = String(try await bob.itemID("Jam").suffix(8))
            try await bob.run(["photo", jam, "--save", scratch.url.appendingPathComponent("bob-jam.png").path])
            /// The attachment files on Bob's device: named by their SHA-256.
            func bobsAttachmentFiles() throws -> [String] {
                let all = FileManager.default.enumerator(atPath: scratch.folder("bob").path)?.allObjects as? [String] ?? []
                return all.filter { $0.split(separator: "/").last.map { $0.count == 64 && $0.allSatisfy(\.isHexDigit) } ?? false }
            }
            #expect(try bobsAttachmentFiles().count == 1)

            // When Ann removes him while he, offline, adds beans to the household and sets how much jam is left
            try await bob.run(["add", "--name", "Beans", "--household", "Home"], server: unreachableServer)
            try await bob.run(["edit", jam, "--quantity", "3"], server: unreachableServer)
            try await ann.run(["household", "remove", bob.username])
            let refused = try await bob.pantry.run(["sync"])
            #expect(refused.isOneLineError && refused.stderr.contains("You are no longer a member of Home"), "\(refused.stderr)")

            // Then the household's photo has left his device, with its items
            #expect(try bobsAttachmentFiles().isEmpty)
            #expect(try await bob.items().isEmpty)
            // And his beans cannot be sent again as they were, but can be kept as his own
            let failures = try #require(try await bob.run(["failures", "--json"]).json() as? [[String: Any]])
            #expect(failures.count == 2, "\(failures)")
            // Each named by its item, though the household's items have left his device
            let listed = try await bob.pantry.run(["failures"], environment: ["COLUMNS": "200"])
            #expect(listed.stdout.contains("Beans") && listed.stdout.contains("Jam"), "\(listed.stdout)")
            let beans = try #require(failures.first?["id"] as? String, "\(failures)")
            let jamEdit = try #require(failures.last?["id"] as? String, "\(failures)")
            let again = try await bob.pantry.run(["settle", String(beans.suffix(8)), "--keep-mine"])
            #expect(again.isOneLineError && again.stderr.contains("--personal"), "\(again.stderr)")
            let kept = try await bob.run(["settle", String(beans.suffix(8)), "--personal"])
            #expect(kept.stdout.contains("Kept item Beans as your own"), "\(kept.stdout)")
            // The jam he changed, kept as his own, is the jam whole: its name, and what he said is left
            let keptJam = try await bob.run(["settle", String(jamEdit.suffix(8)), "--personal"])
            #expect(keptJam.stdout.contains("Kept item Jam as your own"), "\(keptJam.stdout)")
            let synced = try await bob.pantry.run(["sync"])
            #expect(synced.status == 0, "\(synced.stderr)")
            let items = try await bob.items()
            #expect(Set(items.compactMap { $0["name"] as? String }) == ["Beans", "Jam"] && items.allSatisfy { $0["space"] is NSNull }, "\(items)")
            #expect(items.first { $0["name"] as? String == "Jam" }?["quantity"] as? Double == 3, "\(items)")
            let status = try jsonObject(try await bob.run(["status", "--json"]))
            #expect(status["failed"] as? Int == 0, "\(status)")
        }
    }

    @Test func anInvitationByEmailShowsOnceTheAddressIsConfirmedAndADeclinedOneBringsNothing() async throws {
        let mail = try ScratchFolder("pantry-mail")
        defer { mail.remove() }
        try await withLiveServer(configure: { $0.mail = .directory(mail.url.path) }) { server, scratch in
            // Given Ann's household with bread in it, and her invitation to Bob, by email
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let bob = try await PantryPerson.signUp("bob", server: server, scratch: scratch)
            let email = "\(bob.username.replacingOccurrences(of: "_", with: "."))@example.com"
            try await ann.run(["household", "create", "Home"])
            try await ann.run(["add", "--name", "Bread", "--household", "Home"])
            try await ann.run(["household", "invite", email, "--role", "viewer"])
            try await ann.run(["sync"])
            // When Bob, who never confirmed his address, looks: no invitation, and one line on what to do
            let unproven = try await bob.run(["household", "invitations"])
            #expect(unproven.stdout == "Confirm your email to see invitations sent to it: pantry verify --resend.\n", "\(unproven.stdout)")
            let unprovenJSON = try jsonObject(try await bob.run(["household", "invitations", "--json"]))
            #expect(unprovenJSON["awaitingEmailVerification"] as? Bool == true && (unprovenJSON["invitations"] as? [Any])?.isEmpty == true)
            // And a wrong code is one line and exit 1, the right one confirms the address
            let wrong = try await bob.pantry.run(["verify", "12345"])
            #expect(wrong.status != 0 && wrong.stderr.split(separator: "\n").count == 1, "\(wrong.stderr)")
            let confirmed = try await bob.run(["verify", try Self.code(to: email, in: mail.url)])
            #expect(confirmed.stdout.contains("Email confirmed"), "\(confirmed.stdout)")
            let invitations = try jsonObject(try await bob.run(["household", "invitations", "--json"]))
            #expect(invitations["awaitingEmailVerification"] as? Bool == false)
            let id = try #require((invitations["invitations"] as? [[String: Any]])?.first?["id"] as? String, "\(invitations)")
            // When he declines it
            let declined = try await bob.run(["household", "decline", String(id.suffix(8))])
            #expect(declined.stdout.contains("Declined the invitation to Home."), "\(declined.stdout)")
            try await bob.run(["sync"])
            // Then no invitation waits, he is in no household, and none of its items reached him
            let after = try jsonObject(try await bob.run(["household", "invitations", "--json"]))
            #expect((after["invitations"] as? [Any])?.isEmpty == true, "\(after)")
            #expect(try await bob.items().isEmpty)
            #expect(try await bob.run(["household"]).stdout.contains("You are in no household yet"))
        }
    }

    /// The code of the newest mail to `address` in a mail folder the server writes.
    private static func code(to address: String, in folder: URL) throws -> String {
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".eml") }.sorted()
        for file in files.reversed() {
            let mail = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            if mail.contains("To: \(address)"), let range = mail.range(of: "Your verification code is ") {
                return String(mail[range.upperBound...].prefix(6))
            }
        }
        throw TestFailure("no code mailed to \(address)")
    }

    @Test func mistakesAreOneLineWithTheRightStatus() async throws {
        try await withLiveServer { server, scratch in
            let ann = try await PantryPerson.signUp("ann", server: server, scratch: scratch)
            let usage: [[String]] = [
                ["household", "create", ""], ["household", "create", String(repeating: "x", count: 61)], ["household", "create", "a\tb"],
                ["household", "invite", " "], ["household", "invite", "bob", "--role", "owner"], ["household", "accept", "ab12"],
                ["household", "use"], ["household", "use", "Home", "--personal"], ["household", "members", ""],
                ["add", "--name", "Jam", "--household", ""], ["household", "remove", ""], ["household", "role", "bob", "boss"],
            ]
            for arguments in usage {
                let outcome = try await ann.pantry.run(arguments)
                #expect(outcome.status == 64 && outcome.isOneLineError, "\(arguments): \(outcome.status) \(outcome.stderr)")
            }
            let failures: [[String]] = [
                ["household", "members"], ["household", "leave"], ["household", "invite", "bob"], ["household", "use", "Nowhere"],
                ["add", "--name", "Jam", "--household", "Nowhere"], ["household", "accept", "00000000-0000-7000-8000-000000000000"],
            ]
            let long = try await ann.pantry.run(["household", "create", String(repeating: "x", count: 10_000)])
            #expect(long.status == 64 && long.stderr.count < 200, "\(long.stderr.count)")
            for arguments in failures {
                let outcome = try await ann.pantry.run(arguments)
                #expect(outcome.status == 1 && outcome.isOneLineError, "\(arguments): \(outcome.status) \(outcome.stderr)")
            }
            for sub in ["list", "create", "invite", "invitations", "accept", "decline", "members", "role", "leave", "remove", "use"] {
                let help = try await ann.pantry.run(["household", sub, "--help"])
                #expect(help.status == 0 && help.stdout.contains("Example: pantry household"), "\(sub): \(help.stdout)")
            }
            // An option before the subcommand's name is taken as after it
            #expect(try await ann.pantry.run(["--json", "household", "list"]).stdout.hasPrefix("["))
        }
    }
}
