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
    private let writing = Mutex<LineFormat>(LineFormat())
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
        // NB: 20 ms more gather a batch under load (fewer wake-ups on a busy machine); an idle server
        // waits on the doorbell. Notice and up never wait.
        usleep(20_000)
        waiting.store(false, ordering: .sequentiallyConsistent)
        drain(adding: nil)
    }

    /// Takes every buffered line (and `extra`), puts them in the order they were logged, and writes them.
    private func drain(adding extra: Entry?) {
        writing.withLock { format in
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
            text.reserveCapacity(batch.count * 200)
            for entry in batch { format.append(entry, to: &text) }
            writeAll(&text)
        }
    }

    private func writeAll(_ text: inout String) {
        text.withUTF8 { buffer in
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
}

/// The lines one group of threads logged and the writer has not taken yet.
private final class Shard: Sendable {
    let entries = Mutex<[BufferedLogOutput.Entry]>([])
}

/// Writes an entry as StreamLogHandler writes the same event, byte for byte.
/// NB: the writer runs once per request: pieces are appended to one text, the metadata merged in a
/// small array, and the local time worked out once per second.
private struct LineFormat {
    private struct Field {
        let key: String
        var value: Logger.MetadataValue
    }

    private var second = Int.min
    private var timestamp = ""
    private var fields: [Field] = []

    mutating func append(_ entry: BufferedLogOutput.Entry, to text: inout String) {
        let event = entry.event
        fields.removeAll(keepingCapacity: true)
        for (key, value) in entry.metadata { fields.append(Field(key: key, value: value)) }
        if let explicit = event.metadata {
            for (key, value) in explicit { set(key, value) }
        }
        if let error = event.error {
            set("error.message", "\(error)")
            set("error.type", "\(String(reflecting: type(of: error)))")
        }
        fields.sort { $0.key < $1.key }
        text += time(entry.second)
        text += " "
        text += event.level.rawValue
        if !entry.label.isEmpty {
            text += " "
            text += entry.label
        }
        text += ":"
        for field in fields {
            text += " "
            text += field.key
            text += "="
            text += field.value.description
        }
        text += " ["
        text += event.source
        text += "] "
        text += event.message.description
        text += "\n"
    }

    private mutating func set(_ key: String, _ value: Logger.MetadataValue) {
        if let index = fields.firstIndex(where: { $0.key == key }) {
            fields[index].value = value
        } else {
            fields.append(Field(key: key, value: value))
        }
    }

    /// The local time of a second as StreamLogHandler prints it.
    private mutating func time(_ second: Int) -> String {
        guard second != self.second else { return timestamp }
        var seconds = time_t(second)
        var local = tm()
        var buffer = [Int8](repeating: 0, count: 64)
        if localtime_r(&seconds, &local) == nil {
            timestamp = "<unknown>"
        } else {
            strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
            timestamp = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
        self.second = second
        return timestamp
    }
}
