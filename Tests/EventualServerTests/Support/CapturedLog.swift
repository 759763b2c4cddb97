import Logging
import Synchronization

/// Every line a server logged, at every level, for tests that check what the log says.
final class CapturedLog: Sendable {
    struct Line: Sendable {
        let level: Logger.Level
        let text: String
    }

    private let lines = Mutex<[Line]>([])

    /// A logger that writes here, letting `trace` and up through.
    func logger(label: String = "eventual-server") -> Logger {
        var logger = Logger(label: label) { _ in Handler(log: self) }
        logger.logLevel = .trace
        return logger
    }

    var all: [Line] { lines.withLock { $0 } }
    var text: String { all.map(\.text).joined(separator: "\n") }

    func lines(at level: Logger.Level) -> [Line] { all.filter { $0.level == level } }

    fileprivate func append(_ line: Line) { lines.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(level: Logger.Level, message: Logger.Message, metadata extra: Logger.Metadata?, source: String,
                 file: String, function: String, line: UInt) {
            let merged = metadata.merging(extra ?? [:]) { $1 }
            let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            log.append(Line(level: level, text: "\(level) \(source) \(message) \(rendered)"))
        }
    }
}
