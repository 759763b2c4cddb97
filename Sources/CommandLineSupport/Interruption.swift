import Dispatch
import Foundation

/// A command that runs until the person stops it (`--watch`): Ctrl-C (SIGINT) or SIGTERM ends it
/// cleanly, with status 0, instead of killing it mid-print.
public enum Interruption {
    /// Runs `body` until it returns or throws, or until SIGINT or SIGTERM arrives: then `body`'s
    /// task is cancelled and this returns once it has ended.
    public static func untilSignalled(_ body: @escaping @Sendable () async throws -> Void) async throws {
        let task = Task { try await body() }
        let sources = [SIGINT, SIGTERM].map { number in
            // NB: ignored first, so that the default action (ending the process at once) never runs.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { task.cancel() }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        do {
            try await task.value
        } catch {
            // NB: whatever a cancelled body throws on its way out is the stop the person asked for.
            if task.isCancelled { return }
            throw error
        }
    }
}

extension Terminal {
    /// `value` as JSON on one line (a `--watch --json` prints one document per line).
    public static func jsonLine(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
