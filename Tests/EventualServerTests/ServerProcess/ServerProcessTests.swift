import EventualAPI
import Foundation
import Testing

@Suite("The eventual-server process: connection cap and graceful shutdown", .timeLimit(.minutes(1)), .tags(.endToEnd))
struct ServerProcessTests {
    @Test func aConnectionCapHoldsFurtherConnectionsBackUntilIdleOnesAreClosed() async throws {
        try await withServerProcess(["--max-connections", "2", "--idle-timeout", "2"]) { port, _ in
            // Given two connections that sent half a header and fill the cap
            let first = try RawConnection(port: port), second = try RawConnection(port: port)
            let filled = ContinuousClock.now
            try first.send("GET /health HTTP/1.1\r\nHost: x")
            try second.send("GET /health HTTP/1.1\r\nHost: x")
            try await Task.sleep(for: .milliseconds(300))
            // When a third client asks for /health
            let third = try RawConnection(port: port, timeout: .seconds(10))
            try third.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let answer = await offCooperativePool { third.readAll() }
            // Then it is answered, but only once the idle timeout has closed one of the others
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
            // NB: measured from before the two idle connections' last bytes, so that a busy machine's
            // late sleep cannot eat into it: answered at once would be ~0.3 s, held back at least
            // the 2 s idle timeout (a timer never fires early).
            #expect(ContinuousClock.now - filled >= .milliseconds(1950))
        }
    }

    @Test func gracefulShutdownSaysWhatItDid() async throws {
        let output = try await withServerProcess([]) { port, _ in
            let connection = try RawConnection(port: port)
            try connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            #expect(await offCooperativePool { connection.readAll() }.hasPrefix("HTTP/1.1 200"))
        }
        #expect(output.contains("graceful shutdown"), "\(output)")
        // the health check that waited for the start, and the one above
        #expect(output.contains("requests_served=2"), "\(output)")
        #expect(output.contains("stopped"), "\(output)")
    }

    @Test func aGracefulStopLosesNoAccessLogLine() async throws {
        // Given a server at the default log level that answered 200 pipelined requests
        let output = try await withServerProcess([]) { port, process in
            let connection = try RawConnection(port: port)
            let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            try connection.send(String(repeating: request, count: 199) + "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let answers = await offCooperativePool { connection.readToEnd() }
            #expect(answers.components(separatedBy: "HTTP/1.1 200").count - 1 == 200)
            // When it is stopped at once, its last lines still in its buffer
        }
        // Then every request it served has its line
        let served = try #require(output.firstMatch(of: /requests_served=(\d+)/).map { Int($0.1) } ?? nil)
        let lines = output.split(separator: "\n").filter { $0.contains(" info ") && $0.hasSuffix("[EventualServer] request") }
        #expect(served >= 201)
        #expect(lines.count == served, "\(lines.count) access-log lines for \(served) requests")
    }

    /// Runs the built executable on a free port and a fresh SQLite file, hands `body` the port,
    /// then stops it with SIGTERM and returns what it printed.
    @discardableResult
    private func withServerProcess(_ arguments: [String], _ body: (Int, Process) async throws -> Void) async throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-process-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = try Self.freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltExecutable.path("eventual-server"))
        process.arguments = ["--port", String(port), "--database", folder.appendingPathComponent("db.sqlite").path,
                             "--log-level", "info", "--bcrypt-cost", "4"] + arguments
        process.environment = BuiltExecutable.environment()
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try ProcessLaunch.run(process)
        let reader = output.fileHandleForReading
        let collected = Task { await offCooperativePool { String(decoding: reader.readDataToEndOfFile(), as: UTF8.self) } }
        do {
            try await Self.waitForHealth(port: port)
            try await body(port, process)
        } catch {
            process.terminate()
            await offCooperativePool { process.waitUntilExit() }
            throw error
        }
        kill(process.processIdentifier, SIGTERM)
        await offCooperativePool { process.waitUntilExit() }
        #expect(process.terminationStatus == 0)
        return await collected.value
    }

    private static func waitForHealth(port: Int) async throws {
        for _ in 0..<200 {
            if let connection = try? RawConnection(port: port, timeout: .seconds(2)) {
                try? connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                if await offCooperativePool { connection.readAll() }.hasPrefix("HTTP/1.1 200") { return }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw RawConnectionError("the server did not answer /health within 20 s")
    }

    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw RawConnectionError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

}
