import EventualKit

/// The calls the server refused (a knowledge-base contribution, a photo's upload, a household
/// change), as `failures` lists them below the refused changes of records. A call has no
/// server's version to take, so it is settled with `retry ID` or `discard ID`, not `settle`.
public struct RefusedCalls {
    public let lines: [OutboxLine]

    public init(of device: SignedInDevice) throws {
        lines = try device.outbox.entries(state: .failed).filter { $0.kind == .call }.map(device.line)
    }

    public var isEmpty: Bool { lines.isEmpty }

    /// The table of them, and how to settle each.
    public func render(command: String) -> String {
        rendered() + "\nSend each again with `\(command) retry ID`, or drop it with `\(command) discard ID`."
    }

    /// The same for an app whose `settle` takes calls (SustainU's scans and visits).
    public func render(settling command: String) -> String {
        rendered() + "\nSettle each: \(command) settle ID --keep-mine (send it again) or --discard (drop it)."
    }

    private func rendered() -> String {
        var table = Table("ID", "WHAT", "REASON")
        table.whole = ["ID"]
        table.cutFirst = ["REASON"]
        for line in lines { table.add(line.shortID, line.summary, line.lastError ?? "refused by the server") }
        return table.render()
    }
}
