import EventualAPI
import EventualServer
import Foundation
import Logging
import Synchronization
import Testing

@Suite("The server's log is written off the request path, every line, in order", .timeLimit(.minutes(1)))
struct BufferedLogTests {
    @Test func aLineReadsAsStreamLogHandlerWritesIt() throws {
        let file = try LogFile()
        // Given the same logger through StreamLogHandler and through the buffered output
        let stream = CollectedStream()
        var plain = Logger(label: "eventual-server") { StreamLogHandler(label: $0, stream: stream, metadataProvider: nil) }
        var buffered = Logger(label: "eventual-server") { BufferedLogHandler(label: $0, output: file.output, metadataProvider: nil) }
        plain[metadataKey: "hb.request.id"] = "abc"
        buffered[metadataKey: "hb.request.id"] = "abc"
        // When each logs an access line, a line with an error and one with no metadata of its own
        for logger in [plain, buffered] {
            logger.info("request", metadata: ["method": "GET", "path": "/health", "status": "200", "duration_ms": "0.12"])
            logger.error("request failed", error: Broken(), metadata: ["path": "/x"])
            logger.notice("stopped")
        }
        file.output.flush()
        // Then the lines are the same but for the time (the second may have turned between them)
        let expected = stream.text.split(separator: "\n").map { $0.drop { $0 != " " } }
        let written = try file.text().split(separator: "\n").map { $0.drop { $0 != " " } }
        #expect(written == expected)
        #expect(written.count == 3)
        #expect(written.first == #" info eventual-server: duration_ms=0.12 hb.request.id=abc method=GET path=/health status=200 [EventualServerTests] request"#)
    }

    @Test func everyLineFromManyThreadsIsWrittenOnceInTheOrderLogged() async throws {
        let file = try LogFile()
        let logger = Logger(label: "eventual-server") { BufferedLogHandler(label: $0, output: file.output) }
        // When eight threads log 2,000 lines each at once
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    await offCooperativePool {
                        for line in 0..<2_000 { logger.info("line", metadata: ["thread": "\(thread)", "n": "\(line)"]) }
                    }
                }
            }
        }
        file.output.flush()
        // Then every line is there once, and each thread's lines in the order it logged them
        let lines = try file.text().split(separator: "\n")
        #expect(lines.count == 16_000)
        var next = [Int](repeating: 0, count: 8)
        for line in lines {
            let fields = Dictionary(uniqueKeysWithValues: line.split(separator: " ").compactMap { field -> (String, Int)? in
                let parts = field.split(separator: "=")
                return parts.count == 2 ? (String(parts[0]), Int(parts[1]) ?? -1) : nil
            })
            let thread = try #require(fields["thread"]), n = try #require(fields["n"])
            #expect(n == next[thread], "thread \(thread): line \(n) after \(next[thread] - 1)")
            next[thread] = n + 1
        }
    }

    @Test func aNoticeIsWrittenBeforeLogReturnsWithTheLinesBeforeIt() throws {
        let file = try LogFile()
        let logger = Logger(label: "eventual-server") { BufferedLogHandler(label: $0, output: file.output, level: .trace) }
        // When a few info lines and then a warning are logged, with no flush
        for n in 0..<3 { logger.info("request \(n)") }
        logger.warning("disk almost full")
        // Then all four are already written, in order
        let lines = try file.text().split(separator: "\n")
        #expect(lines.map { $0.split(separator: "] ").last.map(String.init) } == ["request 0", "request 1", "request 2", "disk almost full"])
    }

    @Test func bufferedLinesAreWrittenWithinMomentsWithoutAFlush() async throws {
        let file = try LogFile()
        let logger = Logger(label: "eventual-server") { BufferedLogHandler(label: $0, output: file.output) }
        logger.info("request")
        let start = ContinuousClock.now
        while try file.text().isEmpty, ContinuousClock.now - start < .seconds(5) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try file.text().hasSuffix("] request\n"))
    }

    @Test func belowItsLevelNothingIsWritten() throws {
        let file = try LogFile()
        let logger = Logger(label: "eventual-server") { BufferedLogHandler(label: $0, output: file.output, level: .warning) }
        logger.info("request")
        file.output.flush()
        #expect(try file.text().isEmpty)
    }
}

private struct Broken: Error, CustomStringConvertible {
    var description: String { "broken" }
}

/// A temporary file a `BufferedLogOutput` writes to.
private final class LogFile: Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("log-\(UUID().uuidString)")
    let output: BufferedLogOutput
    private let descriptor: Int32

    init() throws {
        descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw TestFailure("cannot open \(url.path)") }
        output = BufferedLogOutput(fileDescriptor: descriptor)
    }

    func text() throws -> String { try String(contentsOf: url, encoding: .utf8) }

    deinit {
        close(descriptor)
        try? FileManager.default.removeItem(at: url)
    }
}

/// What a StreamLogHandler wrote.
private final class CollectedStream: TextOutputStream, Sendable {
    private let collected = Mutex("")
    var text: String { collected.withLock { $0 } }
    func write(_ string: String) { collected.withLock { $0 += string } }
}
