import EventualKit
import Foundation

/// A first sync's progress on the terminal, while a command syncs: a bar on stderr, redrawn as
/// pages arrive, shown only when the first sync takes longer than a moment and stderr is a
/// terminal (a script that reads the output sees the command's lines only), and wiped before the
/// command says what it did.
///
///     First sync [##########..............]  41%  12,345 of 30,000 records
public enum FirstSyncBar {
    /// How long a first sync runs before the bar shows.
    public static let moment: Duration = .milliseconds(400)

    /// Runs `work`, drawing the bar of `engine`'s first sync meanwhile (see the throwing one).
    public static func whileRunning<Result: Sendable>(_ engine: SyncEngine, readyNote: String? = nil,
                                                      _ work: @Sendable () async -> Result) async -> Result {
        // NB: `work` cannot throw, so neither does this.
        do { return try await whileRunning(engine, readyNote: readyNote, { () async throws -> Result in await work() }) } catch {
            preconditionFailure("a non-throwing sync threw \(error)")
        }
    }

    /// Runs `work`, drawing the bar of `engine`'s first sync meanwhile. `readyNote` follows the
    /// count once priority 0 is in and the rest still loads ("dashboard ready").
    public static func whileRunning<Result: Sendable>(_ engine: SyncEngine, readyNote: String? = nil,
                                                      _ work: @Sendable () async throws -> Result) async throws -> Result {
        guard Terminal.stderrIsTTY else { return try await work() }
        let drawing = Task {
            try? await Task.sleep(for: moment)
            var drawn = false
            for await status in engine.status {
                if Task.isCancelled { break }
                guard let line = line(status.firstSync, readyNote: readyNote, width: Terminal.columns) else { continue }
                FileHandle.standardError.write(Data(("\r\u{1B}[2K" + line).utf8))
                drawn = true
            }
            return drawn
        }
        let result: Result
        do {
            result = try await work()
        } catch {
            await wipe(drawing)
            throw error
        }
        await wipe(drawing)
        return result
    }

    private static func wipe(_ drawing: Task<Bool, Never>) async {
        drawing.cancel()
        // NB: awaited, so that no redraw lands after the wipe (a status stream ends when its task is cancelled).
        if await drawing.value { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    }

    /// The bar's line for the progress of each priority, nil when no first sync is under way;
    /// at most `width` columns.
    public static func line(_ progress: [PullProgress], readyNote: String? = nil, width: Int) -> String? {
        guard progress.contains(where: { !$0.isComplete }) else { return nil }
        let received = progress.reduce(0) { $0 + $1.received }
        let total = max(received, progress.reduce(0) { $0 + $1.total })
        guard total > 0 else { return nil }
        let fraction = Double(received) / Double(total)
        let percent = "\(Int((fraction * 100).rounded(.down)))%"
        let note = (progress.first?.isComplete == true && progress.count > 1) ? readyNote.map { ", \($0)" } ?? "" : ""
        let count = "\(grouped(received)) of \(grouped(total)) records\(note)"
        let prefix = "First sync "
        // "First sync [" + bar + "]  " + percent right-aligned in 4 + "  " + count, and a column spare.
        let room = width - 1 - prefix.count - 2 - 2 - max(4, percent.count) - 2 - count.count
        let barWidth = max(0, min(30, room))
        guard barWidth >= 5 else {
            // NB: too narrow for a bar: the count alone, without the note, cut only if it must be.
            return String("\(prefix)\(percent)  \(grouped(received))/\(grouped(total))".prefix(max(0, width - 1)))
        }
        let filled = Int((Double(barWidth) * fraction).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: barWidth - filled)
        return prefix + "[" + bar + "]  " + String(repeating: " ", count: max(0, 4 - percent.count)) + percent + "  " + count
    }

    /// "12,345".
    public static func grouped(_ number: Int) -> String {
        let digits = String(number)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }
}

/// A priority's first sync in a command's `status --json`.
public struct FirstSyncJSON: Encodable, Sendable {
    public let priority: Int
    public let received: Int
    public let total: Int
    public let complete: Bool

    public init(_ progress: PullProgress) {
        priority = progress.priority
        received = progress.received
        total = max(progress.total, progress.received)
        complete = progress.isComplete
    }
}

/// The uploads waiting, in a command's `status --json`.
public struct AttachmentsWaitingJSON: Encodable, Sendable {
    public let count: Int
    public let bytes: Int64

    public init(_ status: DeviceStatus) {
        count = status.attachmentsWaiting.count
        bytes = status.attachmentsWaiting.bytes
    }
}
