// A client process for the crash test: it signs in, queues COUNT changes, prints "queued",
// then syncs in small batches until killed. Usage:
//   eventual-crash-child SERVER_URL DATA_DIR EMAIL PASSWORD COUNT
import EventualAPI
import EventualKit
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 6, let serverURL = URL(string: arguments[1]), let count = Int(arguments[5]) else {
    FileHandle.standardError.write(Data("usage: eventual-crash-child SERVER_URL DATA_DIR EMAIL PASSWORD COUNT\n".utf8))
    exit(2)
}
/// Writes a line to standard output at once (the test reads it through a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let folder = URL(fileURLWithPath: arguments[2])
let store = try LocalStore(path: folder.appendingPathComponent("store.sqlite").path)
let vault = SessionVault(secrets: FileSecretStore(directory: folder.appendingPathComponent("secrets")), rounds: 100_000)
// NB: patient deadlines: the server runs inside the test process, which shares two cores with the
// whole suite; a sign-in that took more than the default 5 s made this child exit before "queued".
let link = ServerLink(serverURL: serverURL, timeouts: ServerLink.Timeouts(connect: .seconds(10), firstByte: .seconds(30))) {
    vault.accessToken
}
try await vault.signIn(email: arguments[3], password: arguments[4], client: link.client)
for index in 0..<count {
    try await store.write { tx in
        try tx.recordChange(SyncCollections.pantryItems, id: "crash-\(index)", fields: [
            "name": .string("Item \(index)"), "quantity": .number(Double(index)), "status": "inPantry",
            "boughtAt": .integer(1_764_000_000_000),
        ])
    }
}
say("queued \(count)")
var configuration = SyncConfiguration()
configuration.batchSize = 5
let engine = SyncEngine(store: store, link: link, configuration: configuration)
let outbox = Outbox(store: store)
let sync = Task { await engine.syncNow() }
// NB: tells the test that sync is under way, so that its SIGKILL lands in the middle of it.
while try outbox.counts().pending > count - 20 {
    try await Task.sleep(for: .milliseconds(2))
}
say("progress \(try outbox.counts().pending)")
let report = await sync.value
say("done sent=\(report.sent)")
