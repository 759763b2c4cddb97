import EventualAPI
import EventualKit
import Foundation

/// How every command says when this device last synced: "last sync 3 minutes ago", "last sync never".
public enum LastSync {
    public static func phrase(_ lastSyncAt: Int64?, now: Int64 = UnixMillis.now()) -> String {
        "last sync " + (lastSyncAt.map { TimeAgo.phrase($0, now: now) } ?? "never")
    }
}
