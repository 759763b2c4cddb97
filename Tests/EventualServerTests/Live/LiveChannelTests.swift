import EventualAPI
import EventualStorage
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import SQLKit
import Synchronization
import Testing
@testable import EventualServer

/// The live channel's promise: a push signals the devices of the space's members as it commits,
/// each with the space's newest position, and no one else: not a stranger, not someone removed,
/// not the device that pushed, not a device that subscribes to other collections, not a signed-out
/// token; and a device that stops answering is let go.
@Suite("Live channel: who hears of a push, and who never does", .timeLimit(.minutes(3)))
struct LiveChannelTests {
    @Test(arguments: Backend.available)
    func aPushSignalsTheMembersOtherDevicesAndNeverAStrangersOrThePushers(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            let port = try #require(api.client.port)
            // Given alice's Home with bob in it, and carol, who is not
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob"), carol = try await api.signUp("carol")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            let alicesTablet = try await api.secondDevice(of: alice), carolsTablet = try await api.secondDevice(of: carol)
            let alicesPhoneHears = try await LiveProbe.open(port: port, token: alice.accessToken)
            let alicesTabletHears = try await LiveProbe.open(port: port, token: alicesTablet.accessToken)
            let bobHears = try await LiveProbe.open(port: port, token: bob.accessToken)
            let bobsSpendingHears = try await LiveProbe.open(port: port, token: bob.accessToken, collections: ["spending_accounts"])
            let carolHears = try await LiveProbe.open(port: port, token: carol.accessToken)

            // When alice's phone puts milk in Home
            _ = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-1000), fields: pantryItem())], to: home.id, as: alice)
            // Then bob and alice's tablet hear that Home moved to 1
            #expect(await bobHears.waitUntil(within: .seconds(5)) { $0.contains { $0.spaces?[home.id] == 1 } })
            #expect(await alicesTabletHears.waitUntil(within: .seconds(5)) { $0.contains { $0.spaces?[home.id] == 1 } })

            // And carol, whose own tablet's push she does hear, never hears of Home
            _ = try await api.pushed([SyncChangeJSON(recordId: "tea", hlc: Stamps.at(-900), fields: pantryItem())], to: nil, as: carolsTablet)
            #expect(await carolHears.waitUntil(within: .seconds(5)) { $0.contains { $0.spaces?[carol.id] == 1 } })
            #expect(carolHears.positions(of: home.id).isEmpty, "carol heard of a space she is not in: \(carolHears.messages)")
            // And alice's phone hears of Home only when another device writes to it, not for its own push
            _ = try await api.pushed([SyncChangeJSON(recordId: "bread", hlc: Stamps.at(-800), fields: pantryItem())], to: home.id,
                                     as: alicesTablet)
            #expect(await alicesPhoneHears.waitUntil(within: .seconds(5)) { $0.contains { $0.spaces?[home.id] == 2 } })
            #expect(alicesPhoneHears.positions(of: home.id) == [2])
            // And bob's channel that subscribes to SpendiQ's accounts hears of his own space when his
            // tablet adds an account there, and heard nothing of Home's pantry items before it
            // NB: signals reach a channel in the order their pushes committed: hearing the account
            // means the pantry pushes' signals were dealt with, not that they may still come.
            let bobsTablet = try await api.secondDevice(of: bob)
            let wallet: [String: SyncValue] = ["name": "Wallet", "kind": "cash", "currency": "EUR", "openingBalanceMinor": 0,
                                               "archived": false, "createdAt": 1_764_000_000_000]
            let filed = try await api.pushed([SyncChangeJSON(collection: "spending_accounts", recordId: "wallet", hlc: Stamps.at(-700),
                                                             fields: wallet)], to: nil, as: bobsTablet)
            #expect(filed.map(\.status) == ["applied"], "\(filed)")
            #expect(await bobsSpendingHears.waitUntil(within: .seconds(5)) { $0.contains { $0.spaces?[bob.id] != nil } })
            #expect(bobsSpendingHears.positions(of: home.id).isEmpty, "\(bobsSpendingHears.messages)")
            for probe in [alicesPhoneHears, alicesTabletHears, bobHears, bobsSpendingHears, carolHears] { probe.close() }
        }
    }

    @Test(arguments: Backend.available)
    func someoneRemovedIsToldToPullAndHearsNothingOfTheSpaceAfter(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            let port = try #require(api.client.port)
            // Given alice's Home and Work, bob in both, listening
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice), work = try await api.createdSpace("Work", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            try await api.join(bob, to: work.id, by: alice)
            let bobHears = try await LiveProbe.open(port: port, token: bob.accessToken)
            _ = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-1000), fields: pantryItem())], to: home.id, as: alice)
            #expect(await bobHears.waitUntil(within: .seconds(5)) { $0.contains { $0.spaces?[home.id] == 1 } })
            // When alice removes bob from Home
            let removed = try await api.removeMember(bob.username, from: home.id, as: alice)
            #expect(removed.status == .noContent, "\(removed.text)")
            // Then his devices are told to pull (and learn they left)
            #expect(await bobHears.waitUntil(within: .seconds(5)) { $0.contains { $0.type == .pull } })
            // And a change to Home after it reaches him no more, while one to Work, written after it, does
            _ = try await api.pushed([SyncChangeJSON(recordId: "eggs", hlc: Stamps.at(-900), fields: pantryItem())], to: home.id, as: alice)
            _ = try await api.pushed([SyncChangeJSON(recordId: "pens", hlc: Stamps.at(-800), fields: pantryItem())], to: work.id, as: alice)
            #expect(await bobHears.waitUntil(within: .seconds(5)) { $0.contains { $0.spaces?[work.id] == 1 } })
            #expect(bobHears.positions(of: home.id) == [1], "\(bobHears.messages)")
            bobHears.close()
        }
    }

    @Test(arguments: Backend.available)
    func signingOutClosesTheTokensChannelsAtOnceAndNoBadTokenOpensOne(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            let port = try #require(api.client.port)
            let alice = try await api.signUp("alice")
            let tablet = try await api.secondDevice(of: alice)
            let phoneHears = try await LiveProbe.open(port: port, token: alice.accessToken)
            let tabletHears = try await LiveProbe.open(port: port, token: tablet.accessToken)
            // When the phone signs out
            let started = ContinuousClock.now
            let out = try await api.send(.post, "/auth/logout", headers: alice.bearer)
            #expect(out.status == .noContent, "\(out.text)")
            // Then its channel is closed at once, saying so; the tablet's stays open
            #expect(await phoneHears.waitForEnd(within: .seconds(5)))
            #expect(ContinuousClock.now - started < .seconds(2), "closed only by the periodic check")
            #expect(phoneHears.closeCode == LiveWire.signedOutCode)
            #expect(!tabletHears.hasEnded)
            // And the signed-out token is refused a new channel: the upgrade fails, nothing is heard
            let again = try await LiveProbe.open(port: port, token: alice.accessToken, requireLive: false)
            #expect(await again.waitForEnd(within: .seconds(20)))
            #expect(again.messages.isEmpty)
            // As is a channel with no token, or one that names a collection that cannot be one
            for (token, collections) in [("", ["pantry_items"]), (tablet.accessToken, ["pantry_items:quantity"])] {
                let refused = try await LiveProbe.open(port: port, token: token, collections: collections, requireLive: false)
                #expect(await refused.waitForEnd(within: .seconds(20)))
                #expect(refused.messages.isEmpty)
            }
            tabletHears.close()
        }
    }

    /// The periodic check: a token revoked or expired elsewhere (not by a sign-out here) loses its
    /// channels within a check, saying so; every other channel stays, whoever holds it.
    @Test(arguments: Backend.available)
    func theCheckClosesTheChannelsOfTokensRevokedOrExpiredElsewhereAndNoOther(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live, configure: { $0.liveTokenRecheck = .milliseconds(300) }) { api, location in
            let port = try #require(api.client.port)
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob"), carol = try await api.signUp("carol")
            let tablet = try await api.secondDevice(of: alice)
            let alicesPhone = try await LiveProbe.open(port: port, token: alice.accessToken)
            let alicesTablet = try await LiveProbe.open(port: port, token: tablet.accessToken)
            let bobs = try await LiveProbe.open(port: port, token: bob.accessToken)
            let carols = try await LiveProbe.open(port: port, token: carol.accessToken)
            // When, straight in the database, alice's phone token expires and bob's is revoked
            let database = try await Database.open(location, logger: Logger(label: "test"))
            try await database.withConnection { sql in
                try await sql.update("access_tokens").set("expires_at", to: Int64(1))
                    .where("token_hash", .equal, AccessToken.hash(alice.accessToken)).run()
                try await sql.update("access_tokens").set("revoked_at", to: UnixMillis.now())
                    .where("token_hash", .equal, AccessToken.hash(bob.accessToken)).run()
            }
            await database.close()
            // Then those two channels are closed by the next check, saying the device is signed out
            #expect(await alicesPhone.waitForEnd(within: .seconds(10)))
            #expect(await bobs.waitForEnd(within: .seconds(10)))
            #expect(alicesPhone.closeCode == LiveWire.signedOutCode && bobs.closeCode == LiveWire.signedOutCode)
            // And alice's tablet and carol keep theirs through more checks
            try await Task.sleep(for: .seconds(1))
            #expect(!alicesTablet.hasEnded && !carols.hasEnded)
            alicesTablet.close()
            carols.close()
        }
    }

    /// The check's read: of any number of hashes (more than one statement's worth), exactly the
    /// tokens neither expired nor revoked, whichever statement each falls in.
    @Test(arguments: Backend.available)
    func theCheckReadsGoodTokensAFewHundredAStatement(_ backend: Backend) async throws {
        try await withServer(backend, mode: .router) { api, location in
            let accounts = try await [api.signUp("ann"), api.signUp("ben"), api.signUp("cat")]
            let database = try await Database.open(location, logger: Logger(label: "test"))
            do {
                let hashes = accounts.map { AccessToken.hash($0.accessToken) }
                try await database.withConnection { sql in
                    try await sql.update("access_tokens").set("revoked_at", to: UnixMillis.now()).where("token_hash", .equal, hashes[1]).run()
                }
                let reads = try await BarcodeLookupReads.prepare(database)
                // NB: unknown hashes around the real ones, so that they land in different statements
                let unknown = (0..<(2 * BarcodeLookupReads.tokensPerStatement + 1)).map { AccessToken.hash("no such token \($0)") }
                let asked = Set(unknown + hashes)
                #expect(try await reads.goodTokens(among: asked, at: UnixMillis.now()) == [hashes[0], hashes[2]])
                // A moment after their expiry, none is good; and nothing asked, nothing found
                #expect(try await reads.goodTokens(among: asked, at: Int64.max).isEmpty)
                #expect(try await reads.goodTokens(among: [], at: UnixMillis.now()).isEmpty)
            } catch {
                await database.close()
                throw error
            }
            await database.close()
        }
    }

    @Test(arguments: Backend.available)
    func aDeviceThatStopsReadingIsLetGoByTheHeartbeat(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live, configure: { $0.liveHeartbeat = .milliseconds(300) }) { api in
            let port = try #require(api.client.port)
            let alice = try await api.signUp("alice")
            // Given a device that opens its channel and then never reads nor answers a ping
            let silent = try RawConnection(port: port, timeout: .seconds(15))
            try silent.send("GET \(LiveWire.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                            + "Authorization: Bearer \(alice.accessToken)\r\n\r\n")
            // When signals keep coming for it
            let tablet = try await api.secondDevice(of: alice)
            for index in 0..<50 {
                _ = try await api.pushed([SyncChangeJSON(recordId: "item-\(index)", hlc: Stamps.at(-1000 + Int64(index)), fields: pantryItem())],
                                         to: nil, as: tablet)
            }
            // Then the server closes the connection (an unanswered ping, then its close timeout)
            let started = ContinuousClock.now
            // NB: the blocking reads run on a thread of their own: on the shared pool they starved the server.
            let received = await offCooperativePool { silent.readToEnd() }
            #expect(received.hasPrefix("HTTP/1.1 101"), "not upgraded: \(received.prefix(200))")
            #expect(received.contains(#""type":"live""#))
            #expect(ContinuousClock.now - started < .seconds(14), "the server kept a device that answers nothing")
            #expect(await offCooperativePool { silent.isClosedByPeer() })
        }
    }

    @Test(arguments: Backend.available)
    func aStoppingServerClosesItsChannelsGoingAwayAndStopsEvenWithADeviceThatNeverReads(_ backend: Backend) async throws {
        // NB: a channel is no task of the server's, so nothing cancels it at a stop: the stop must
        // close it, or the server waits for ever (a stop that hung once hung every live test).
        let held = Mutex<(LiveProbe?, RawConnection?, ContinuousClock.Instant?)>((nil, nil, nil))
        // NB: pings far apart: what closes the silent device's socket is the stop, not its heartbeat.
        try await withServer(backend, mode: .live, configure: { $0.liveHeartbeat = .seconds(600) }) { api in
            let port = try #require(api.client.port)
            // Given a device holding its channel, and one that opened its channel and reads nothing
            let alice = try await api.signUp("alice"), tablet = try await api.secondDevice(of: alice)
            let device = try await LiveProbe.open(port: port, token: alice.accessToken)
            let silent = try RawConnection(port: port, timeout: .seconds(60))
            try silent.send("GET \(LiveWire.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                            + "Authorization: Bearer \(tablet.accessToken)\r\n\r\n")
            try await Task.sleep(for: .milliseconds(300))
            // When the server stops (the end of this block)
            held.withLock { $0 = (device, silent, ContinuousClock.now) }
        }
        let (device, silent, stopping) = held.withLock { $0 }
        let stopped = ContinuousClock.now
        // Then it stopped at once, and the device heard it go away (and will come back)
        #expect(stopped - (try #require(stopping)) < .seconds(5), "the server took \(stopped - stopping!) to stop")
        let probe = try #require(device)
        #expect(await probe.waitForEnd(within: .seconds(2)))
        #expect(probe.wentAway, "the device did not hear the server go away")
        #expect(probe.closeCode == nil, "a stop is not a sign-out: the device must come back")
        // And the device that reads nothing finds the same close waiting, and its socket closed
        // once the close timeout (5 s) passed without its answer: well before its pings would (on
        // a loaded machine, a timer of the shared event loops may fire late)
        let received = await offCooperativePool { silent!.readToEnd() }
        #expect(received.hasPrefix("HTTP/1.1 101") && received.contains("server shutting down"), "\(received.prefix(300))")
        #expect(ContinuousClock.now - stopped < .seconds(40))
        #expect(await offCooperativePool { silent!.isClosedByPeer() })
    }

    @Test(.enabled(if: Backend.available.contains(.postgres), "server processes share a database only on PostgreSQL"))
    func aPushOnOneServerReachesADeviceConnectedToAnother() async throws {
        // NB: two applications in this process, each with its own pool, its own listening
        // connection and its own connections' hub: what two server processes share is the database.
        let scratch = try await ScratchDatabase.make(.postgres)
        do {
            let first = try await buildApplication(testConfiguration(scratch.location))
            let second = try await buildApplication(testConfiguration(scratch.location))
            try await first.test(.live) { firstClient in
                try await second.test(.live) { secondClient in
                    let one = API(client: firstClient), two = API(client: secondClient)
                    let alice = try await one.signUp("alice"), bob = try await one.signUp("bob")
                    let home = try await one.createdSpace("Home", as: alice)
                    try await one.join(bob, to: home.id, by: alice)
                    // Given bob listening on the second server
                    let bobHears = try await LiveProbe.open(port: try #require(secondClient.port), token: bob.accessToken)
                    // When alice pushes to Home through the first
                    _ = try await one.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-1000), fields: pantryItem())],
                                             to: home.id, as: alice)
                    // Then bob hears it from the second
                    #expect(await bobHears.waitUntil(within: .seconds(5)) { $0.contains { $0.spaces?[home.id] == 1 } })
                    // And the other way round
                    let alicesTablet = try await two.secondDevice(of: alice)
                    let aliceHears = try await LiveProbe.open(port: try #require(firstClient.port), token: alice.accessToken)
                    _ = try await two.pushed([SyncChangeJSON(recordId: "eggs", hlc: Stamps.at(-900), fields: pantryItem())],
                                             to: home.id, as: alicesTablet)
                    #expect(await aliceHears.waitUntil(within: .seconds(5)) { $0.contains { $0.spaces?[home.id] == 2 } })
                    bobHears.close()
                    aliceHears.close()
                }
            }
        } catch {
            await scratch.remove()
            throw error
        }
        await scratch.remove()
    }

    @Test(.enabled(if: Backend.available.contains(.postgres), "only PostgreSQL carries signals between processes"))
    func aLostListeningConnectionTellsEveryDeviceToPullThenListensAgain() async throws {
        try await withServer(.postgres, mode: .live) { api, location in
            let port = try #require(api.client.port)
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            let bobHears = try await LiveProbe.open(port: port, token: bob.accessToken)
            // When the server's listening connection is killed, and alice pushes at once
            let database = try await Database.open(location, logger: Logger(label: "test"))
            let killed = try await database.withConnection { sql in
                try await sql.raw("""
                    SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'LISTEN%'
                    """).all()
            }
            await database.close()
            try #require(killed.count == 1, "expected the one listening connection, found \(killed.count)")
            _ = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-1000), fields: pantryItem())], to: home.id, as: alice)
            // Then bob's device hears of it anyway: the signal, or a pull once the server listens again
            #expect(await bobHears.waitUntil(within: .seconds(10)) { $0.contains { $0.type == .pull || $0.spaces?[home.id] == 1 } })
            // And the server listens again: the next push is signalled
            try await Task.sleep(for: .milliseconds(500))
            _ = try await api.pushed([SyncChangeJSON(recordId: "eggs", hlc: Stamps.at(-900), fields: pantryItem())], to: home.id, as: alice)
            #expect(await bobHears.waitUntil(within: .seconds(10)) { $0.contains { $0.spaces?[home.id] == 2 } }, "\(bobHears.messages)")
            bobHears.close()
        }
    }

    @Test
    func aSlowReaderIsOwedOneNumberPerSpaceHoweverManySignalsCame() {
        let connection = LiveConnection(userID: "bob", tokenHash: String(repeating: "f", count: 64), collections: ["pantry_items"])
        for position in 1...100_000 { connection.offer(space: "s\(position % 3)", position: Int64(position)) }
        connection.offerPull()
        let owed = connection.take()
        #expect(owed == [LiveWire.Message(type: .pull), LiveWire.Message(type: .moved, spaces: ["s0": 99_999, "s1": 100_000, "s2": 99_998])])
        #expect(connection.take().isEmpty)
    }

    @Test
    func aSignalForASpaceWithManyMembersIsSentInPartsPostgreSQLAccepts() throws {
        let members = (0..<2_000).map { _ in UUID().uuidString.lowercased() }
        let move = LiveMove(space: "home", position: 7, collections: ["pantry_items"], members: members, by: "f")
        let parts = LiveBus.parts(of: .moved(move))
        #expect(parts.count > 1)
        var heard: [String] = []
        for part in parts {
            #expect(try JSONEncoder().encode(part).count <= LiveBus.largestPayload)
            guard case .moved(let piece) = part else { Issue.record("not a move: \(part)"); continue }
            #expect(piece.space == "home" && piece.position == 7 && piece.by == "f")
            heard += piece.members
        }
        #expect(heard == members)
    }
}

extension API {
    /// The same person signed in on another device: another token.
    func secondDevice(of account: Account) async throws -> Account {
        let answer = try await login(email: account.email, password: account.password)
        try #require(answer.status == .created, "login: \(answer.text)")
        struct Token: Decodable { let accessToken: String }
        return Account(id: account.id, username: account.username, email: account.email, password: account.password,
                       accessToken: try answer.decode(Token.self).accessToken)
    }
}
