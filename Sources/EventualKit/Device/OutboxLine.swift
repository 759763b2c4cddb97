import Foundation

/// One outbox entry, said for people: the engine's entry with the app's words for it.
public struct OutboxLine: Sendable, Equatable, Codable {
    /// Waiting to be sent (or being sent), or refused by the server.
    public enum State: String, Sendable, Codable { case pending, failed }

    public let id: String
    public let state: State
    /// The record a change is about, or the record an upload's attachment belongs to (nil for another call).
    public let recordID: String?
    /// What the entry is, in the app's words: "item Milk", "scan of a photo", "account Cash",
    /// "photo of item Jam, 2.4 MiB".
    public let summary: String
    /// For an upload: the records that refer to its attachment, and the app's name for the first.
    public let upload: UploadOwners?
    public let attempts: Int
    /// The server's reason for a refused entry, or the last transient error.
    public let lastError: String?

    /// The id's last characters, as a status shows it and `retry`/`discard` take it.
    public var shortID: String { String(id.suffix(OutboxEntry.shortIDLength)) }

    /// The line of `entry`, summarised as `summary`; `upload`: the records an upload's attachment belongs to.
    public init(entry: OutboxEntry, summary: String, upload: UploadOwners? = nil) {
        id = entry.id
        state = entry.state == .failed ? .failed : .pending
        recordID = entry.kind == .change ? entry.recordID : upload?.holders.first?.recordID
        self.summary = summary
        self.upload = upload
        attempts = entry.attempts
        lastError = entry.lastError
    }
}

/// The records an upload's attachment belongs to: those on this device whose field refers to it.
public struct UploadOwners: Sendable, Equatable, Codable {
    public let holders: [AttachmentHolder]
    /// The app's name for the first record ("item Jam").
    public let name: String

    /// The field that refers to the attachment, as the first record names it ("photo", "receipt").
    public var field: String { holders.first?.field ?? "attachment" }

    /// "item Jam", "item Jam and 2 more".
    public var records: String { holders.count > 1 ? "\(name) and \(holders.count - 1) more" : name }
}

/// Online or offline, what waits in the outbox and why, and when the last sync was.
public struct DeviceStatus: Sendable, Equatable {
    public let connectivity: Connectivity
    /// Entries waiting to be sent.
    public let pending: Int
    /// Entries the server refused.
    public let failed: Int
    /// Every outbox entry, oldest first.
    public let entries: [OutboxLine]
    /// Unix milliseconds of the last complete sync.
    public let lastSyncAt: Int64?
    /// Sign-outs the server has not heard of yet.
    public let pendingRevocations: Int
    /// The first sync of each priority of the app's subscriptions, most urgent first.
    public var firstSync: [PullProgress] = []
    /// Attachments whose upload waits, and their bytes.
    public var attachmentsWaiting: (count: Int, bytes: Int64) = (0, 0)

    public init(connectivity: Connectivity, pending: Int, failed: Int, entries: [OutboxLine], lastSyncAt: Int64?,
                pendingRevocations: Int, firstSync: [PullProgress] = [], attachmentsWaiting: (count: Int, bytes: Int64) = (0, 0)) {
        self.connectivity = connectivity
        self.pending = pending
        self.failed = failed
        self.entries = entries
        self.lastSyncAt = lastSyncAt
        self.pendingRevocations = pendingRevocations
        self.firstSync = firstSync
        self.attachmentsWaiting = attachmentsWaiting
    }

    public static func == (lhs: DeviceStatus, rhs: DeviceStatus) -> Bool {
        lhs.connectivity == rhs.connectivity && lhs.pending == rhs.pending && lhs.failed == rhs.failed && lhs.entries == rhs.entries
            && lhs.lastSyncAt == rhs.lastSyncAt && lhs.pendingRevocations == rhs.pendingRevocations && lhs.firstSync == rhs.firstSync
            && lhs.attachmentsWaiting == rhs.attachmentsWaiting
    }

    /// The first sync, summed over priorities, while some of it has still to come; nil once done.
    public var firstSyncUnderWay: PullProgress? { PullProgress.underWay(firstSync) }
}

/// What became of a refused entry sent again.
public enum RetryOutcome: Sendable, Equatable {
    /// The server took it.
    case sent
    /// It waits for the next sync (offline, or the server is slow).
    case waiting
    /// The server refused it again, for this reason.
    case refused(String)
}
