// Measures the engine on a release build against a real server on loopback (SQLite):
// 10,000 changes made offline (nine in ten new items, one in ten a counter delta: a use of an
// item), then drained in batches and, for comparison, one request per change; then a pull of
// 10,000 records into an empty device. Then a household: three people share a space, one drains
// 10,000 changes into it, and each of the other two pulls it into an empty device. Then the
// floor: what SQLite alone takes to write the rows the drain left and to read them back
// (`StorageFloor`). Prints a line of figures for each.
//   eventual-bench-sync [CHANGES]
import EventualAPI
import EventualBench
import EventualKit
import EventualServer
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import OpenAPIRuntime
import Synchronization

let changes = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 10_000 : 10_000
let work = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-bench-sync-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: work) }

/// Counts request and response body bytes, and requests.
final class WireMeter: ClientMiddleware {
    let bytes = Atomic<Int>(0)
    let requests = Atomic<Int>(0)

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var sent = 0
        var requestBody = body
        if let body {
            let data = try await Data(collecting: body, upTo: 64 * 1024 * 1024)
            sent = data.count
            requestBody = HTTPBody(data)
        }
        let (response, responseBody) = try await next(request, requestBody, baseURL)
        var received = 0
        var answer = responseBody
        if let responseBody {
            let data = try await Data(collecting: responseBody, upTo: 64 * 1024 * 1024)
            received = data.count
            answer = HTTPBody(data)
        }
        // NB: headers count too: a request line and headers are about what HTTP/1.1 adds.
        let headerBytes = request.headerFields.reduce(0) { $0 + $1.name.rawName.count + $1.value.count + 4 }
            + response.headerFields.reduce(0) { $0 + $1.name.rawName.count + $1.value.count + 4 } + 60
        bytes.add(sent + received + headerBytes, ordering: .relaxed)
        requests.add(1, ordering: .relaxed)
        return (response, answer)
    }
}


struct Device {
    let store: LocalStore
    let vault: SessionVault
    let link: ServerLink
    let meter = WireMeter()

    init(_ name: String, server: URL) throws {
        let folder = work.appendingPathComponent(name)
        store = try LocalStore(path: folder.appendingPathComponent("store.sqlite").path, migrations: [BenchTables.pantryItems])
        let vault = SessionVault(secrets: FileSecretStore(directory: folder.appendingPathComponent("secrets")))
        self.vault = vault
        link = ServerLink(serverURL: server, timeout: .seconds(60), middlewares: [meter]) { vault.accessToken }
    }

    /// `count` changes in `space` (nil: the person's own), one in ten of them a delta of an item
    /// made earlier; returns the new items.
    @discardableResult
    func makeOfflineChanges(_ count: Int, firstItem: Int = 0, space: String? = nil) async throws -> Int {
        var items = 0
        for index in 0..<count {
            try await store.write { [items] tx in
                if index % 10 == 9 {
                    try tx.recordChange(SyncCollections.pantryItems, id: "item-\(firstItem + items / 2)", adding: ["quantity": -1], space: space)
                } else {
                    let number = firstItem + items
                    try tx.recordChange(SyncCollections.pantryItems, id: "item-\(number)", fields: [
                        "name": .string("Product \(number)"), "quantity": .number(Double(number % 7) + 2), "unit": "pcs",
                        "status": "inPantry", "boughtAt": .integer(1_764_000_000_000 + Int64(number)),
                    ], space: space)
                }
            }
            if index % 10 != 9 { items += 1 }
        }
        return items
    }

    func engine(batchSize: Int) -> SyncEngine {
        var configuration = SyncConfiguration()
        configuration.batchSize = batchSize
        return SyncEngine(
            store: store, link: link, collections: [TableMirror(SyncCollections.pantryItems, table: "items")],
            configuration: configuration
        )
    }
}

func register(_ name: String, server: URL) async throws -> (String, String) {
    let link = ServerLink(serverURL: server) { nil }
    let email = "\(name)@bench.example", password = "bench-password"
    _ = try await link.client.register(body: .json(.init(username: name, email: email, password: password)))
    return (email, password)
}

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return elapsed.fractionalMilliseconds / 1000
}

let (url, server) = try await BenchServer.start(ServerConfiguration(
    database: .sqlite(path: work.appendingPathComponent("server.sqlite").path), logLevel: .error, bcryptCost: 10
))

// Batched: one user's 10,000 offline changes, drained in requests of up to 500. The user has a
// tenth as many items from before (synced, not timed), so that a new device pulls 10,000 records.
let (emailA, passwordA) = try await register("bench_batched", server: url)
let batched = try Device("batched", server: url)
try await batched.vault.signIn(email: emailA, password: passwordA, client: batched.link.client)
let earlier = changes / 10
for index in 0..<earlier {
    try await batched.store.write { tx in
        try tx.recordChange(SyncCollections.pantryItems, id: "earlier-\(index)", fields: [
            "name": .string("Earlier \(index)"), "quantity": 1, "unit": "pcs", "status": "inPantry", "boughtAt": 1_764_000_000_000,
        ])
    }
}
_ = await batched.engine(batchSize: 500).syncNow(pull: false)
try await batched.makeOfflineChanges(changes)
batched.meter.bytes.store(0, ordering: .relaxed)
batched.meter.requests.store(0, ordering: .relaxed)
var batchedReport = SyncReport()
let t1 = await seconds { batchedReport = await batched.engine(batchSize: 500).syncNow(pull: false) }
let bytesPerChange = Double(batched.meter.bytes.load(ordering: .relaxed)) / Double(changes)
let batchedRequests = batched.meter.requests.load(ordering: .relaxed)

// One by one: another user's 10,000 changes, one request each.
let (emailB, passwordB) = try await register("bench_single", server: url)
let single = try Device("single", server: url)
try await single.vault.signIn(email: emailB, password: passwordB, client: single.link.client)
try await single.makeOfflineChanges(changes)
var singleReport = SyncReport()
let t2 = await seconds { singleReport = await single.engine(batchSize: 1).syncNow(pull: false) }

// Pull: a new device of the first user.
let fresh = try Device("fresh", server: url)
try await fresh.vault.signIn(email: emailA, password: passwordA, client: fresh.link.client)
var pullReport = SyncReport()
let t3 = await seconds { pullReport = await fresh.engine(batchSize: 500).syncNow() }

// A household: the owner's space with two members; the owner drains 10,000 changes into it, then
// each member pulls it into an empty device. Set up through the API (not timed).
let (ownerEmail, ownerPassword) = try await register("house_owner", server: url)
let owner = try Device("house-owner", server: url)
try await owner.vault.signIn(email: ownerEmail, password: ownerPassword, client: owner.link.client)
let home = UUID().uuidString
guard case .created = try await owner.link.client.createSpace(headers: .init(idempotencyKey: UUID().uuidString),
                                                              body: .json(.init(id: home, name: "Home"))) else {
    print("bench-sync: ERROR: the household's space was not created")
    exit(1)
}
var members: [Device] = []
for name in ["house_b", "house_c"] {
    let (email, password) = try await register(name, server: url)
    let member = try Device(name, server: url)
    try await member.vault.signIn(email: email, password: password, client: member.link.client)
    guard case .accepted = try await owner.link.client.inviteToSpace(path: .init(spaceId: home), headers: .init(idempotencyKey: UUID().uuidString),
                                                                     body: .json(.init(invitee: name, role: .editor))),
          case .ok(let invitations) = try await member.link.client.listInvitations(),
          let invitation = try invitations.body.json.invitations.first,
          case .ok = try await member.link.client.acceptInvitation(path: .init(invitationId: invitation.id),
                                                                   headers: .init(idempotencyKey: UUID().uuidString)) else {
        print("bench-sync: ERROR: \(name) did not join the household")
        exit(1)
    }
    members.append(member)
}
let householdItems = try await owner.makeOfflineChanges(changes, space: home)
var householdReport = SyncReport()
let t4 = await seconds { householdReport = await owner.engine(batchSize: 500).syncNow(pull: false) }
var memberPulls: [(seconds: Double, pulled: Int)] = []
for member in members {
    var report = SyncReport()
    let time = await seconds { report = await member.engine(batchSize: 500).syncNow() }
    memberPulls.append((time, report.pulled))
}

server.cancel()
// NB: the server's database closed before the floor opens its file: two copies of SQLite in one
// process (the server's and GRDB's) each think they alone hold its locks, and one's recovery of
// the shared memory file under the other's map is a bus error.
_ = await server.result
let records = earlier + changes - changes / 10
guard batchedReport.sent == changes, singleReport.sent == changes, pullReport.pulled == records else {
    print("bench-sync: ERROR: batched sent \(batchedReport.sent), one-by-one sent \(singleReport.sent), pulled \(pullReport.pulled) of \(changes)")
    exit(1)
}
guard householdReport.sent == changes, householdReport.rejected == 0, memberPulls.allSatisfy({ $0.pulled == householdItems }) else {
    print("bench-sync: ERROR: household sent \(householdReport.sent) of \(changes), \(householdReport.rejected) refused, "
          + "members pulled \(memberPulls.map(\.pulled)) of \(householdItems)")
    exit(1)
}
// The floor: what SQLite alone takes to write the rows the batched drain left on the server (the
// person's records and the ids of their applied changes, in one transaction) and to read the
// records back in the order a pull reads them.
guard let batchedUser = batched.vault.session?.userID else {
    print("bench-sync: ERROR: the batched device is not signed in")
    exit(1)
}
let floor = try StorageFloor.measure(serverDatabase: work.appendingPathComponent("server.sqlite").path, [
    .init("sync_records", where: "space_id", is: batchedUser, orderedBy: "seq"),
    .init("sync_applied_changes", where: "user_id", is: batchedUser),
], in: work)
print("batched drain: \(batchedRequests) requests")
// NB: the server checks every pushed change against its collection's rules; this says which ran.
print("rules: \(SyncCollections.pantryItems.rules.count) on pantry_items (\(SyncCollections.pantryItems.rules.map(\.field).joined(separator: ", "))),"
      + " checked on each drained change; refused: \(batchedReport.rejected + singleReport.rejected + householdReport.rejected)")
print(String(format: "drain %d: batched %.2f s, one-by-one %.2f s, ratio %.1f, %.0f bytes/change | pull %d: %.2f s",
             changes, t1, t2, t2 / t1, bytesPerChange, records, t3))
print(String(format: "floor (SQLite alone, the server's tables): write %d rows %.3f s, read %d %.3f s | drain %.1fx its floor, pull %.1fx",
             floor.written, floor.writeSeconds, floor.read, floor.readSeconds, t1 / floor.writeSeconds, t3 / floor.readSeconds))
print(String(format: "household of 3: drain %d into the shared space %.2f s | pull %d by each of 2 members: %.2f s, %.2f s",
             changes, t4, householdItems, memberPulls[0].seconds, memberPulls[1].seconds))
exit(0)
