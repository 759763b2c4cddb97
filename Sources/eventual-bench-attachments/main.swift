// Measures attachments through the outbox (scripts/bench-attachments.sh): COUNT photos of SIZE
// MiB attached offline to pantry items, then sent to a real server on loopback (SQLite): the
// throughput; then the same for another person through a fault proxy that cuts the connection
// every 5 MiB sent, until every photo is in: the bytes sent over the bytes stored (what resuming
// costs). Each run checks that every blob the server holds matches its SHA-256.
//   eventual-bench-attachments [COUNT] [MIB]
import Crypto
import EventualAPI
import EventualBench
import EventualFaultProxy
import EventualKit
import EventualServer
import Foundation
import GRDB

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200 : 200
let mebibytes = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 2 : 2
let size = mebibytes * 1024 * 1024
let work = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-bench-attachments-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: work) }

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
}


/// A photo's bytes: a JPEG's first bytes, then bytes of its own (no two photos alike).
func photo(_ index: Int) -> Data {
    var data = Data(capacity: size)
    data.append(contentsOf: [0xFF, 0xD8, 0xFF, 0xE0])
    var state = UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15
    while data.count < size {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        withUnsafeBytes(of: state) { data.append(contentsOf: $0) }
    }
    return data.prefix(size)
}

/// One person's device: COUNT photos attached offline, then synced through `server` until every
/// one is in; answers the seconds it took.
func run(_ name: String, server: URL, direct: URL, cuts: (() -> Void)? = nil) async throws -> Double {
    let email = "\(name)@bench.example", password = "bench-password"
    _ = try await ServerLink(serverURL: direct) { nil }.client.register(body: .json(.init(username: name, email: email, password: password)))
    let folder = work.appendingPathComponent(name)
    let store = try LocalStore(path: folder.appendingPathComponent("store.sqlite").path, migrations: [BenchTables.pantryItems])
    let vault = SessionVault(secrets: FileSecretStore(directory: folder.appendingPathComponent("secrets")))
    let link = ServerLink(serverURL: server, timeout: .seconds(120)) { vault.accessToken }
    try await vault.signIn(email: email, password: password, client: ServerLink(serverURL: direct) { nil }.client)
    let attachments = Attachments(folder: folder.appendingPathComponent("attachments"), store: store, link: link)
    let items = TableMirror(SyncCollections.pantryItems, table: "items")
    for index in 0..<count {
        let file = work.appendingPathComponent("photo-\(name)-\(index).jpg")
        try photo(index).write(to: file)
        let prepared = try attachments.prepare(fileAt: file)
        try FileManager.default.removeItem(at: file)
        try await store.write { tx in
            let reference = try tx.queueUpload(prepared)
            try items.insert("item-\(index)", ["name": .string("Photo \(index)"), "quantity": 1, "status": "inPantry",
                                               "boughtAt": 1_764_000_000_000, "photo": reference], in: tx)
        }
    }
    var configuration = SyncConfiguration()
    configuration.sendsAnalytics = false
    configuration.retry = Backoff(initial: .milliseconds(10), maximum: .milliseconds(50))
    let engine = SyncEngine(store: store, link: link, collections: [items],
                            calls: attachments.uploads,
                            configuration: configuration)
    let start = ContinuousClock.now
    var rounds = 0
    while try attachments.waiting().count > 0 {
        rounds += 1
        guard rounds <= 10 * count + 100 else { throw BenchFailure(description: "\(name): uploads did not finish in \(rounds) rounds") }
        let report = await engine.syncNow(pull: false)
        if report.rejected > 0 { throw BenchFailure(description: "\(name): the server refused \(report.rejections)") }
    }
    let seconds = (ContinuousClock.now - start).fractionalMilliseconds / 1000
    FileHandle.standardError.write(Data("\(name): \(count) uploads in \(rounds) round(s)\n".utf8))
    return seconds
}

let database = work.appendingPathComponent("server.sqlite").path
var quotas = Quotas()
quotas.bytesPerUser = Int64(count) * Int64(size) * 2
let (url, server) = try await BenchServer.start(ServerConfiguration(
    database: .sqlite(path: database), logLevel: .error, bcryptCost: 4, quotas: quotas
))
let port = url.port!

let stored = Double(count) * Double(size)
let direct = try await run("direct", server: url, direct: url)
let throughput = stored / 1_048_576 / direct

let proxy = try await FaultProxy.start(upstreamPort: port, seed: 5)
proxy.mode = .cutRequestAfter(bytes: 5 * 1024 * 1024)
let viaProxy = URL(string: "http://127.0.0.1:\(proxy.port)")!
let cutSeconds = try await run("cut", server: viaProxy, direct: url)
let sent = Double(proxy.counters.bytesUp)
let cuts = proxy.counters.connectionsCut
await proxy.stop()

// Every blob the server keeps is whole and matches its name.
let check = try await Database.open(.sqlite(path: database), logger: .init(label: "bench"))
let blobs = try await check.withConnection { sql in
    try await sql.raw("SELECT space_id, sha256, size FROM attachments WHERE complete = 1").all()
}
for blob in blobs {
    let (space, sha256) = (try blob.decode(column: "space_id", as: String.self), try blob.decode(column: "sha256", as: String.self))
    let chunks = try await check.withConnection { sql in
        try await sql.raw("SELECT data FROM attachment_chunks WHERE space_id = \(bind: space) AND sha256 = \(bind: sha256) ORDER BY byte_offset").all()
    }
    var hasher = SHA256()
    for chunk in chunks { hasher.update(data: try chunk.decode(column: "data", as: Data.self)) }
    guard AttachmentReference.hex(hasher.finalize()) == sha256 else { throw BenchFailure(description: "blob \(sha256) does not match its digest") }
}
await check.close()
guard blobs.count == 2 * count else { throw BenchFailure(description: "the server holds \(blobs.count) blobs, not \(2 * count)") }
server.cancel()

print(String(format: "direct: %d x %d MiB in %.2f s; with a cut every 5 MiB: %.2f s, %d cuts, %.0f MiB sent for %.0f MiB stored",
             count, mebibytes, direct, cutSeconds, cuts, sent / 1_048_576, stored / 1_048_576))
print(String(format: "attachments %d x %d MiB: %.1f MiB/s | with cuts: overhead %.3f", count, mebibytes, throughput, sent / stored))
exit(0)
