import EventualKit
import Foundation

/// What a view that adds records up (a balance, a total, a count, a reminder) says while a
/// first sync has still to bring some: its figures are short until then. The same words in
/// every app, and the same JSON keys (`IncompleteJSON`).
public enum RecordsArriving {
    /// "Your records are still arriving (6 of 9 records): the figures below may be short until
    /// `spendiq sync` has brought the rest."
    public static func warning(_ progress: PullProgress, command: String) -> String {
        let total = max(progress.total, progress.received)
        let counted = total > 0 ? " (\(FirstSyncBar.grouped(progress.received)) of \(FirstSyncBar.grouped(total)) records)" : ""
        return "Your records are still arriving\(counted): the figures below may be short until `\(command) sync` has brought the rest."
    }

    /// Prints the warning (yellow, wrapped) when a first sync is under way; nothing once it is done.
    public static func say(_ progress: PullProgress?, command: String) {
        guard let progress else { return }
        print(Terminal.paint(Terminal.wrap(warning(progress, command: command)), .yellow))
    }
}

/// A summing view in `--json` with what a first sync leaves out: `"incomplete": true` while
/// records are still arriving, and, for a whole view (`counts`), `"arriving":
/// {"received": 6, "total": 9}` (null once all are in). A row of a list carries `incomplete` alone.
public struct IncompleteJSON<View: Encodable>: Encodable {
    private let view: View
    private let progress: PullProgress?
    private let counts: Bool

    /// `view` with `incomplete` (and, with `counts`, `arriving`) beside its own keys.
    public init(_ view: View, arriving progress: PullProgress?, counts: Bool = true) {
        self.view = view
        self.progress = progress
        self.counts = counts
    }

    private enum Key: String, CodingKey { case incomplete, arriving }

    private struct Arriving: Encodable {
        let received: Int
        let total: Int
    }

    public func encode(to encoder: any Encoder) throws {
        // NB: the view's keys and these share one object: a keyed container asked for twice is the same one.
        try view.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(progress != nil, forKey: .incomplete)
        guard counts else { return }
        try container.encode(progress.map { Arriving(received: $0.received, total: max($0.total, $0.received)) }, forKey: .arriving)
    }
}
