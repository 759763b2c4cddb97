// Measures a new SpendiQ device's first sync (scripts/bench-first-sync.sh), in two processes so
// that the device's peak memory is its own:
//   eventual-bench-first-sync serve RECORDS   a server on loopback (SQLite) with one person's
//       RECORDS records: half pantry items, half SpendiQ transactions over two years (and five
//       accounts), a tenth of each deleted; prints "ready PORT EMAIL PASSWORD LIVE RECORDS" (LIVE:
//       the SpendiQ records alive) and serves until its standard input closes.
//   eventual-bench-first-sync device PORT EMAIL PASSWORD LIVE RECORDS   a new SpendiQ device, SpendiQ's
//       own subscriptions (accounts, budgets and the last 30 days first), syncing from nothing;
//       prints the times to priority 0 and to all, what it received and its peak memory.
import EventualAPI
import EventualBench
import EventualKit
import EventualServer
import Foundation
import GRDB
import Spending

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: eventual-bench-first-sync serve RECORDS | device PORT EMAIL PASSWORD LIVE RECORDS\n".utf8))
    exit(64)
}
let work = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-bench-first-sync-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: work) }


func seconds(since start: ContinuousClock.Instant) -> Double {
    (ContinuousClock.now - start).fractionalMilliseconds / 1000
}

/// The person's changes, written by a device that syncs nothing back (it only pushes).
func seed(_ records: Int, server: URL) async throws -> (email: String, password: String, live: Int) {
    let email = "first-sync@bench.example", password = "bench-password"
    let registration = ServerLink(serverURL: server) { nil }
    _ = try await registration.client.register(body: .json(.init(username: "first_sync", email: email, password: password)))
    let store = try LocalStore(path: work.appendingPathComponent("seeder/store.sqlite").path)
    let vault = SessionVault(secrets: FileSecretStore(directory: work.appendingPathComponent("seeder/secrets")))
    let link = ServerLink(serverURL: server, timeout: .seconds(120)) { vault.accessToken }
    try await vault.signIn(email: email, password: password, client: link.client)
    let engine = SyncEngine(store: store, link: link)
    let now = UnixMillis.now()
    let accounts = 5, items = records / 2, transactions = records - items - accounts
    let twoYears: Int64 = 730 * 24 * 3600 * 1000
    try await store.write { tx in
        for index in 0..<accounts {
            try tx.recordChange(SyncCollections.spendingAccounts, id: "account-\(index)", fields: [
                "name": .string("Account \(index)"), "kind": "bank", "currency": "EUR", "openingBalanceMinor": 100_000,
                "archived": false, "createdAt": .integer(now - twoYears),
            ])
        }
    }
    // NB: a thousand changes per local transaction: the seeding is not what is measured.
    for start in stride(from: 0, to: max(items, transactions), by: 1000) {
        try await store.write { tx in
            for index in start..<min(start + 1000, max(items, transactions)) {
                if index < items {
                    try tx.recordChange(SyncCollections.pantryItems, id: "item-\(index)", fields: [
                        "name": .string("Product \(index)"), "quantity": 2, "unit": "pcs", "status": "inPantry",
                        "boughtAt": .integer(now - Int64(index) * 1000),
                    ])
                }
                if index < transactions {
                    // Spread evenly over two years, newest first: about 4 % in the last 30 days.
                    try tx.recordChange(SyncCollections.spendingTransactions, id: "transaction-\(index)", fields: [
                        "accountId": .string("account-\(index % accounts)"), "kind": "expense", "amountMinor": .integer(Int64(100 + index % 5000)),
                        "currency": "EUR", "category": "Groceries", "occurredAt": .integer(now - twoYears * Int64(index) / Int64(transactions)),
                        "automatic": false,
                    ])
                }
            }
        }
    }
    for start in stride(from: 0, to: max(items, transactions), by: 10_000) {
        try await store.write { tx in
            for index in stride(from: start, to: min(start + 10_000, max(items, transactions)), by: 10) {
                if index < items { try tx.recordChange(SyncCollections.pantryItems, id: "item-\(index)", fields: [:], deleted: true) }
                if index < transactions {
                    try tx.recordChange(SyncCollections.spendingTransactions, id: "transaction-\(index)", fields: [:], deleted: true)
                }
            }
        }
    }
    let report = await engine.syncNow(pull: false)
    guard report.failure == nil, report.rejected == 0 else {
        throw BenchFailure("seeding failed: \(report.failure?.description ?? "\(report.rejected) refused")")
    }
    let deletedTransactions = (transactions + 9) / 10
    return (email, password, accounts + transactions - deletedTransactions)
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

switch arguments[1] {
case "serve":
    let records = arguments.count > 2 ? Int(arguments[2]) ?? 100_000 : 100_000
    let (url, server) = try await BenchServer.start(ServerConfiguration(
        database: .sqlite(path: work.appendingPathComponent("server.sqlite").path), logLevel: .error, bcryptCost: 4
    ))
    let port = url.port!
    let start = ContinuousClock.now
    let (email, password, live) = try await seed(records, server: url)
    FileHandle.standardError.write(Data(String(format: "seeded %d records in %.1f s\n", records, seconds(since: start)).utf8))
    // NB: straight to the file descriptor: the script reads the line while this process goes on.
    FileHandle.standardOutput.write(Data("ready \(port) \(email) \(password) \(live) \(records)\n".utf8))
    // Serves until the script closes our standard input.
    while readLine() != nil {}
    // NB: nothing to keep: the database is a scratch one, and a cancelled server logs its shutdown.
    _ = server
    exit(0)

case "device":
    guard arguments.count == 7, let port = Int(arguments[2]), let live = Int(arguments[5]), let records = Int(arguments[6]) else {
        throw BenchFailure("usage: eventual-bench-first-sync device PORT EMAIL PASSWORD LIVE RECORDS")
    }
    let url = URL(string: "http://127.0.0.1:\(port)")!
    let store = try LocalStore(path: work.appendingPathComponent("device/store.sqlite").path, migrations: SpendingSync.migrations)
    let vault = SessionVault(secrets: FileSecretStore(directory: work.appendingPathComponent("device/secrets")))
    let link = ServerLink(serverURL: url, timeout: .seconds(120)) { vault.accessToken }
    try await vault.signIn(email: arguments[3], password: arguments[4], client: link.client)
    var configuration = SyncConfiguration()
    configuration.sendsAnalytics = false
    if let pageSize = ProcessInfo.processInfo.environment["PULL_LIMIT"].flatMap(Int.init) { configuration.pullLimit = pageSize }
    let engine = SyncEngine(store: store, link: link, collections: SpendingSync.mirrors, subscriptions: SpendingSync.subscriptions,
                            configuration: configuration)
    let start = ContinuousClock.now
    let sync = Task { await engine.syncNow() }
    await engine.synced(priority: 0)
    let priority0 = seconds(since: start)
    let recentRows = try await store.reader.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM spending_transactions") ?? 0 }
    let report = await sync.value
    let all = seconds(since: start)
    guard report.failure == nil else { throw BenchFailure("the first sync failed: \(report.failure!)") }
    let received = report.pulled + report.echoes
    let rows = try await store.reader.read { db in
        try Int.fetchOne(db, sql: "SELECT (SELECT COUNT(*) FROM spending_accounts) + (SELECT COUNT(*) FROM spending_transactions)") ?? 0
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let peakMB = Double(usage.ru_maxrss) / 1024
    let progress = engine.currentStatus.firstSync.map { "p\($0.priority) \($0.received)/\($0.total)" }.joined(separator: ", ")
    print("transactions on the device at priority 0: \(recentRows); progress \(progress)")
    // NB: every record received is a row (no deletion, no pantry item came) and every live one came.
    print("received \(received), rows \(rows), live SpendiQ records on the server \(live)"
        + (received == rows && rows == live ? "" : "  MISMATCH"))
    print(String(format: "first sync %d: priority0 %.2f s, all %.2f s, received %d, peak %.0f MB",
                 records, priority0, all, received, peakMB))
    guard received == rows && rows == live else { exit(1) }

default:
    FileHandle.standardError.write(Data("usage: eventual-bench-first-sync serve RECORDS | device PORT EMAIL PASSWORD LIVE RECORDS\n".utf8))
    exit(64)
}
