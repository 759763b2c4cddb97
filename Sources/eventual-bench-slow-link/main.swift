// Measures sync over a slow link (scripts/bench-slow-link.sh): a real server on loopback
// (SQLite), a fault proxy that carries 32 KiB/s each way with 300 ms of latency, and a device
// behind it whose requests are cut at 5 s of silence (the engine's default), never for taking long:
//   1. a new device's first sync of RECORDS pantry items (names and barcodes from Open Food
//      Facts), with pull pages sent plain, then gzip-compressed: time, and bytes on the wire per record;
//   2. a photo of PHOTO_MIB MiB uploaded from the device;
//   3. a drain of CHANGES edits the device made offline.
// Each step prints progress on stderr and must complete with everything in; the last line is
//   slow link 32 KiB/s: first sync plain P s (B B/record), gzip G s (b B/record) | photo F s | drain D s
//   eventual-bench-slow-link [RECORDS] [PHOTO_MIB] [CHANGES] [KIB_PER_SECOND]
import EventualAPI
import EventualBench
import EventualFaultProxy
import EventualKit
import EventualServer
import Foundation
import GRDB

let arguments = CommandLine.arguments
let records = arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000
let photoMiB = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
let changes = arguments.count > 3 ? Int(arguments[3]) ?? 1_000 : 1_000
let rate = (arguments.count > 4 ? Int(arguments[4]) ?? 32 : 32) * 1024
let work = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-bench-slow-link-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: work) }

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
}

func say(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }

func seconds(since start: ContinuousClock.Instant) -> Double { (ContinuousClock.now - start).fractionalMilliseconds / 1000 }

/// Barcodes and names of real products (SampleData), to give the pages real text to compress.
func products() throws -> [(code: String, name: String)] {
    let text = try String(contentsOfFile: "SampleData/off-products-1000-slim.csv", encoding: .utf8)
    var found: [(String, String)] = []
    for line in text.split(whereSeparator: \.isNewline).dropFirst() {
        // NB: the first two columns; a quoted name may hold commas.
        let code = line.prefix { $0 != "," }
        var rest = line.dropFirst(code.count + 1)
        let name: Substring
        if rest.first == "\"" {
            rest = rest.dropFirst()
            name = rest.prefix { $0 != "\"" }
        } else {
            name = rest.prefix { $0 != "," }
        }
        if !name.isEmpty { found.append((String(code), String(name.prefix(120)))) }
    }
    guard !found.isEmpty else { throw BenchFailure(description: "no products in SampleData/off-products-1000-slim.csv") }
    return found
}

/// A device of the bench person: its store, vault, link (through `server`) and engine.
struct BenchDevice {
    let store: LocalStore
    let link: ServerLink
    let engine: SyncEngine
    let attachments: Attachments

    init(_ name: String, server: URL, email: String, password: String, direct: URL) async throws {
        let folder = work.appendingPathComponent(name)
        store = try LocalStore(path: folder.appendingPathComponent("store.sqlite").path, migrations: [BenchTables.pantryItems])
        let vault = SessionVault(secrets: FileSecretStore(directory: folder.appendingPathComponent("secrets")), rounds: 100_000)
        link = ServerLink(serverURL: server) { vault.accessToken }
        try await vault.signIn(email: email, password: password, client: ServerLink(serverURL: direct) { nil }.client)
        attachments = Attachments(folder: folder.appendingPathComponent("attachments"), store: store, link: link)
        var configuration = SyncConfiguration()
        configuration.sendsAnalytics = false
        engine = SyncEngine(store: store, link: link, collections: [TableMirror(SyncCollections.pantryItems, table: "items")],
                            calls: attachments.uploads, configuration: configuration)
    }

    func count() throws -> Int { try store.reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? 0 } }
}

/// One server, its person holding `records` items; answers the server, its URL and the person.
func serve(compressing: Bool, name: String) async throws -> (task: Task<Void, any Error>, url: URL, email: String, password: String) {
    var configuration = ServerConfiguration(database: .sqlite(path: work.appendingPathComponent("\(name).sqlite").path),
                                            logLevel: .error, bcryptCost: 4)
    configuration.compressesPullPages = compressing
    configuration.quotas.syncRecordsPerUser = records * 2
    configuration.quotas.bytesPerUser = Int64(photoMiB + 16) * 1_048_576
    let (url, task) = try await BenchServer.start(configuration)
    let email = "\(name)@bench.example", password = "bench-password"
    _ = try await ServerLink(serverURL: url) { nil }.client.register(body: .json(.init(username: name, email: email, password: password)))
    let seeder = try await BenchDevice("\(name)-seeder", server: url, email: email, password: password, direct: url)
    let catalogue = try products()
    let now = UnixMillis.now()
    for start in stride(from: 0, to: records, by: 1_000) {
        try await seeder.store.write { tx in
            for index in start..<min(start + 1_000, records) {
                let product = catalogue[index % catalogue.count]
                try tx.recordChange(SyncCollections.pantryItems, id: UUID().uuidString.lowercased(), fields: [
                    "name": .string(product.name), "barcode": .string(product.code), "quantity": .number(Double(index % 5 + 1)),
                    "status": "inPantry", "boughtAt": .integer(now - Int64(index) * 60_000),
                ])
            }
        }
    }
    while try Outbox(store: seeder.store).counts().pending > 0 {
        let report = await seeder.engine.syncNow(pull: false)
        if let failure = report.failure { throw BenchFailure(description: "seeding: \(failure)") }
    }
    return (task, url, email, password)
}

/// Runs `body` while printing what the proxy carried every five seconds.
func withProgress<T>(_ label: String, _ proxy: FaultProxy, _ body: () async throws -> T) async throws -> T {
    let ticker = Task {
        let start = ContinuousClock.now
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(5))
            say(String(format: "  %@: %.0f s, %d KiB down, %d KiB up", label, seconds(since: start),
                       proxy.counters.bytesDown / 1024, proxy.counters.bytesUp / 1024))
        }
    }
    defer { ticker.cancel() }
    return try await body()
}

/// A new device's first sync through a slow link; answers the seconds and the bytes down per record.
func firstSync(compressing: Bool) async throws -> (seconds: Double, bytesPerRecord: Double, server: (task: Task<Void, any Error>, url: URL, email: String, password: String), proxy: FaultProxy) {
    let name = compressing ? "gzip" : "plain"
    let server = try await serve(compressing: compressing, name: name)
    let proxy = try await FaultProxy.start(upstreamPort: server.url.port!, seed: 45)
    proxy.mode = .slowLink(bytesPerSecond: rate, latency: .milliseconds(300))
    let device = try await BenchDevice("\(name)-device", server: URL(string: "http://127.0.0.1:\(proxy.port)")!,
                                       email: server.email, password: server.password, direct: server.url)
    let start = ContinuousClock.now
    let report = try await withProgress("first sync (\(name))", proxy) { await device.engine.syncNow() }
    let elapsed = seconds(since: start)
    guard report.failure == nil, report.isComplete else { throw BenchFailure(description: "first sync (\(name)): \(String(describing: report.failure))") }
    guard try device.count() == records else { throw BenchFailure(description: "first sync (\(name)): \(try device.count()) of \(records) records") }
    say(String(format: "first sync (%@): %d records in %.1f s, %d bytes down", name, records, elapsed, proxy.counters.bytesDown))
    return (elapsed, Double(proxy.counters.bytesDown) / Double(records), server, proxy)
}

do {
    let plain = try await firstSync(compressing: false)
    plain.server.task.cancel()
    await plain.proxy.stop()
    let gzip = try await firstSync(compressing: true)

    // The photo and the drain, from a device behind the same slow link to the compressing server.
    let device = try await BenchDevice("gzip-device", server: URL(string: "http://127.0.0.1:\(gzip.proxy.port)")!,
                                       email: gzip.server.email, password: gzip.server.password, direct: gzip.server.url)
    var photo = Data([0xFF, 0xD8, 0xFF, 0xE0])
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    while photo.count < photoMiB * 1_048_576 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        withUnsafeBytes(of: state) { photo.append(contentsOf: $0) }
    }
    let photoFile = work.appendingPathComponent("photo.jpg")
    try photo.prefix(photoMiB * 1_048_576).write(to: photoFile)
    let prepared = try device.attachments.prepare(fileAt: photoFile)
    let items = TableMirror(SyncCollections.pantryItems, table: "items")
    try await device.store.write { tx in
        let reference = try tx.queueUpload(prepared)
        _ = try items.insert("photo-item", ["name": "Shelf", "quantity": 1, "status": "inPantry", "boughtAt": 1_764_000_000_000, "photo": reference], in: tx)
    }
    let photoStart = ContinuousClock.now
    let sent = try await withProgress("photo", gzip.proxy) { await device.engine.syncNow(pull: false) }
    let photoSeconds = seconds(since: photoStart)
    guard sent.failure == nil, try device.attachments.waiting().count == 0 else {
        throw BenchFailure(description: "photo: \(String(describing: sent.failure)), \(try device.attachments.waiting().count) waiting")
    }
    say(String(format: "photo: %d MiB in %.1f s", photoMiB, photoSeconds))

    let ids = try await device.store.reader.read { db in try String.fetchAll(db, sql: "SELECT id FROM items WHERE id != 'photo-item' LIMIT ?", arguments: [changes]) }
    try await device.store.write { tx in
        for (index, id) in ids.enumerated() {
            try items.update(id, setting: ["quantity": .number(Double(index % 9 + 1))], in: tx)
        }
    }
    let upBefore = gzip.proxy.counters.bytesUp
    let drainStart = ContinuousClock.now
    var drained = SyncReport()
    while try Outbox(store: device.store).counts().pending > 0 {
        drained = try await withProgress("drain", gzip.proxy) { await device.engine.syncNow(pull: false) }
        if let failure = drained.failure { throw BenchFailure(description: "drain: \(failure)") }
    }
    let drainSeconds = seconds(since: drainStart)
    say(String(format: "drain: %d changes in %.1f s, %d bytes up", ids.count, drainSeconds, gzip.proxy.counters.bytesUp - upBefore))
    gzip.server.task.cancel()
    await gzip.proxy.stop()

    print(String(format: "slow link %d KiB/s: first sync plain %.1f s (%.0f B/record), gzip %.1f s (%.0f B/record) | photo %d MiB %.1f s | drain %d %.1f s",
                 rate / 1024, plain.seconds, plain.bytesPerRecord, gzip.seconds, gzip.bytesPerRecord, photoMiB, photoSeconds, ids.count, drainSeconds))
} catch {
    say("eventual-bench-slow-link: \(error)")
    exit(1)
}
exit(0)
