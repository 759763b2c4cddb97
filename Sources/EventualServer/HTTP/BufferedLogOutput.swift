import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the server's log lines go (standard output unless told otherwise), written in batches by
/// a thread of its own: a request's access-log line costs an append to its thread's buffer, never
/// a global lock, a clock-to-calendar conversion or a write.
///
/// Lines keep their order. Notice and above are written before `log` returns (with every line
/// buffered before them), so a crash loses no warning; `flush()` writes what waits, and a graceful
/// stop's last notice does it too.
public final class BufferedLogOutput: Sendable {
    /// One line as logged, formatted when written.
    struct Entry: Sendable {
        let sequence: UInt64
        let second: Int
        let label: String
        let metadata: Logger.Metadata
        let event: LogEvent
    }

    private static let shardCount = 16
    /// Lines a shard holds before its writer writes them itself (a reader of the output that falls
    /// behind slows the server down, as a blocking write did, instead of growing without bound).
    private static let shardLimit = 4096

    private let fileDescriptor: Int32
    private let sequence = Atomic<UInt64>(0)
    private let shards: [Shard]
    /// Held while lines are written, so that two batches never interleave.
    private let writing = Mutex<TimestampCache>(TimestampCache())
    private let waiting = Atomic<Bool>(false)
    private let doorbell = DispatchSemaphore(value: 0)

    /// Writes to standard output.
    public convenience init() {
        self.init(fileDescriptor: STDOUT_FILENO)
    }

    /// Writes to `fileDescriptor`, which stays open for as long as this output lives.
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        shards = (0..<Self.shardCount).map { _ in Shard() }
        let thread = Thread { [weak self] in
            while let output = self { output.drainWhenRung() }
        }
        thread.name = "log-writer"
        thread.start()
    }

    /// Takes one line: buffered below notice, written at once from notice up.
    func append(label: String, metadata: Logger.Metadata, event: LogEvent) {
        let entry = Entry(sequence: sequence.wrappingAdd(1, ordering: .relaxed).oldValue, second: time(nil),
                          label: label, metadata: metadata, event: event)
        if event.level >= .notice {
            drain(adding: entry)
            return
        }
        let held = shards[Self.shardIndex()].entries.withLock { entries in
            entries.append(entry)
            return entries.count
        }
        // NB: `waiting` is read before it is swapped: under load the writer has already been rung,
        // and a read shares the flag's cache line between cores where a swap would bounce it.
        if held >= Self.shardLimit {
            drain(adding: nil)
        } else if !waiting.load(ordering: .relaxed), !waiting.exchange(true, ordering: .acquiringAndReleasing) {
            doorbell.signal()
        }
    }

    /// Writes every line logged so far before it returns.
    public func flush() {
        drain(adding: nil)
    }

    private func drainWhenRung() {
        _ = doorbell.wait(timeout: .now() + 1)
        // NB: a few milliseconds more gather a batch under load; an idle server waits on the doorbell.
        usleep(5_000)
        waiting.store(false, ordering: .sequentiallyConsistent)
        drain(adding: nil)
    }

    /// Takes every buffered line (and `extra`), puts them in the order they were logged, and writes them.
    private func drain(adding extra: Entry?) {
        writing.withLock { timestamps in
            var batch: [Entry] = extra.map { [$0] } ?? []
            for shard in shards {
                let taken = shard.entries.withLock { entries in
                    defer { entries.removeAll(keepingCapacity: true) }
                    return entries
                }
                batch.append(contentsOf: taken)
            }
            guard !batch.isEmpty else { return }
            batch.sort { $0.sequence < $1.sequence }
            var text = ""
            text.reserveCapacity(batch.count * 160)
            for entry in batch { Self.append(entry, timestamp: timestamps.text(for: entry.second), to: &text) }
            writeAll(Array(text.utf8))
        }
    }

    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // NB: as StreamLogHandler: a log that cannot be written does not stop the server
                }
                offset += written
            }
        }
    }

    /// The shard of the calling thread: threads seldom share one, so its lock is all but never contended.
    private static func shardIndex() -> Int {
        #if canImport(Darwin)
        let thread = UInt64(UInt(bitPattern: pthread_self()))
        #else
        let thread = UInt64(pthread_self())
        #endif
        return Int(truncatingIfNeeded: (thread &* 0x9E37_79B9_7F4A_7C15) >> 60) % shardCount
    }

    /// Appends the line StreamLogHandler writes for the same event, byte for byte.
    /// NB: pieces appended to one text, metadata merged in a small array: this runs once per request.
    static func append(_ entry: Entry, timestamp: String, to text: inout String) {
        var pairs = Array(entry.metadata)
        func set(_ key: String, _ value: Logger.MetadataValue) {
            if let index = pairs.firstIndex(where: { $0.key == key }) { pairs[index].value = value } else { pairs.append((key, value)) }
        }
        for (key, value) in entry.event.metadata ?? [:] { set(key, value) }
        if let error = entry.event.error {
            set("error.message", "\(error)")
            set("error.type", "\(String(reflecting: type(of: error)))")
        }
        pairs.sort { $0.key < $1.key }
        text += timestamp
        text += " "
        text += entry.event.level.rawValue
        if !entry.label.isEmpty {
            text += " "
            text += entry.label
        }
        text += ":"
        for (key, value) in pairs {
            text += " "
            text += key
            text += "="
            text += value.description
        }
        text += " ["
        text += entry.event.source
        text += "] "
        text += entry.event.message.description
        text += "\n"
    }
}

/// The lines one group of threads logged and the writer has not taken yet.
private final class Shard: Sendable {
    let entries = Mutex<[BufferedLogOutput.Entry]>([])
}

/// The local time of a second as StreamLogHandler prints it, converted once per second.
private struct TimestampCache {
    private var second = Int.min
    private var cached = ""

    mutating func text(for second: Int) -> String {
        guard second != self.second else { return cached }
        var seconds = time_t(second)
        var local = tm()
        var buffer = [Int8](repeating: 0, count: 64)
        if localtime_r(&seconds, &local) == nil {
            cached = "<unknown>"
        } else {
            strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
            cached = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
        self.second = second
        return cached
    }
}
