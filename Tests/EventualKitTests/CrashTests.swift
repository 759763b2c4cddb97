import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

@Suite("A client killed in the middle of a sync", .timeLimit(.minutes(2)), .tags(.endToEnd))
struct CrashTests {
    @Test func aRestartedEngineSendsTheRestAndNothingIsLostOrDoubled() async throws {
        try await withLiveServer { server, scratch in
            let port = try #require(server.port)
            let user = try await registerUser(port: port)
            let url = URL(string: "http://127.0.0.1:\(port)")!
            let folder = scratch.url.appendingPathComponent("child")
            let count = 400
            // Given a child process that queued 400 changes and syncs them in batches of 5
            let child = Process()
            child.executableURL = URL(fileURLWithPath: BuiltExecutable.path("eventual-crash-child"))
            child.arguments = [url.absoluteString, folder.path, user.email, user.password, String(count)]
            let output = Pipe()
            child.standardOutput = output
            try ProcessLaunch.run(child)
            let lines = LineReader(output.fileHandleForReading)
            #expect(await lines.next()?.hasPrefix("queued") == true)
            // When it is killed with SIGKILL while it syncs
            #expect(await lines.next()?.hasPrefix("progress") == true)
            kill(child.processIdentifier, SIGKILL)
            while child.isRunning { try await Task.sleep(for: .milliseconds(10)) }
            #expect(child.terminationReason == .uncaughtSignal)
            // Then a restarted engine on the same folder sends the rest
            let restarted = try Device(folder: folder, serverURL: url)
            #expect(try restarted.vault.resume() != nil)
            let pendingAtRestart = try restarted.outbox.counts().pending
            #expect(pendingAtRestart > 0 && pendingAtRestart < count, "killed before the end: \(pendingAtRestart) left")
            #expect(try restarted.outbox.entries(state: .inFlight).isEmpty)
            // (syncing as the engine would for a person: a round that a busy machine makes miss its
            // deadline is simply tried again; the suite's time limit bounds the whole test)
            while try restarted.outbox.counts() != OutboxCounts() {
                if await restarted.engine.syncNow().failure != nil { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(try restarted.outbox.entries(state: .failed).isEmpty)
            // And a new device sees every change exactly once, with its value
            let fresh = try Device(folder: scratch.url.appendingPathComponent("fresh"), serverURL: url)
            try await fresh.vault.signIn(email: user.email, password: user.password, client: fresh.link.client)
            var pulled = 0
            while true {
                let report = await fresh.engine.syncNow()
                pulled += report.pulled
                if report.failure == nil { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(pulled == count)
            let items = try fresh.items()
            #expect(items.count == count)
            #expect(Set(items.map(\.id)) == Set((0..<count).map { "crash-\($0)" }))
            #expect(items.allSatisfy { $0.quantity == Double($0.id.dropFirst("crash-".count))! })
        }
    }
}

/// The lines a child process prints, read on a thread of their own so that the blocking reads
/// never hold one of the few threads the in-process server needs.
final class LineReader: Sendable {
    private let lines: AsyncStream<String>

    init(_ handle: FileHandle) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        lines = stream
        let thread = Thread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0a) {
                    continuation.yield(String(decoding: buffer[..<newline], as: UTF8.self))
                    buffer.removeSubrange(...newline)
                }
            }
            continuation.finish()
        }
        thread.start()
    }

    func next() async -> String? {
        var iterator = lines.makeAsyncIterator()
        return await iterator.next()
    }
}
