import Foundation
import GRDB

/// A write this device could not save: its disk is full, or its database failed. Said in a
/// person's words, and told apart from the network's failures, which it is not: a sync round that
/// stops for it is no sign of being offline.
///
/// SQLite rolls the failed transaction back whole, so everything saved before is intact and
/// nothing is half-written (an attachment is written beside its place and renamed: `Attachments`).
public enum DeviceStorageFailure {
    /// What `error` says about this device's storage, if it is a failure of it.
    public static func sentence(for error: any Error) -> String? {
        if isFull(error) { return full }
        if let error = error as? DatabaseError {
            return "This device's database could not save (\(error.message ?? "\(error.resultCode)")): what it held before is kept"
        }
        return nil
    }

    /// Whether `error` is a write refused for lack of room (SQLite's SQLITE_FULL, or a file's ENOSPC).
    public static func isFull(_ error: any Error) -> Bool {
        switch error {
        // NB: SQLite says SQLITE_FULL for a full disk and for a file at its `max_page_count`.
        case let error as DatabaseError: return error.resultCode == .SQLITE_FULL
        case let error as CocoaError: return error.code == .fileWriteOutOfSpace
        case let error as POSIXError: return error.code == .ENOSPC
        default:
            let error = error as NSError
            return error.domain == NSPOSIXErrorDomain && error.code == Int(ENOSPC)
        }
    }

    /// The words for a full disk met in a sync round, which starts again by itself at the next sync.
    public static let full = "This device's storage is full: free some space (what it holds is kept)"

    /// The words for a full disk met by a write a person asked for, which is not saved at all.
    public static let fullAtWrite = "This device's storage is full: nothing of this was saved; free some space and try again (what it held before is kept)"
}
