import PostgresKit
import SQLiteNIO

/// Storage failures that are nobody's fault in the request and pass with time: the database is
/// locked by another process, its disk is full, or it cannot be reached. A caller retries them
/// later, instead of taking them for a broken server (the server's `ErrorMapping` says how long).
public enum StorageAvailability: Sendable, Equatable {
    case busy
    case full
    case unreachable

    /// The availability problem `error` reports, if it is one.
    public init?(_ error: any Error) {
        switch error {
        case let error as StorageError:
            guard case .busy = error else { return nil }
            self = .busy
        case let error as SQLiteWriteError:
            switch error.primaryCode {
            case 5, 6: self = .busy      // SQLITE_BUSY, SQLITE_LOCKED
            // NB: a write that fails for lack of space often surfaces as an I/O error (a short write
            // to the WAL) rather than SQLITE_FULL.
            case 13, 10: self = .full    // SQLITE_FULL, SQLITE_IOERR
            default: return nil
            }
        case let error as SQLiteError:
            switch error.reason {
            case .busy, .locked, .busyTimeout, .busyInRecovery, .busyInSnapshot, .lockedBySharedCache: self = .busy
            case .full: self = .full
            // NB: a write that fails for lack of space often surfaces as an I/O error (a short write
            // to the WAL) rather than SQLITE_FULL.
            case .ioError, .ioErrorFailedWrite, .ioErrorFailedSync, .ioErrorFailedDirSync, .ioErrorFailedTruncate,
                 .ioErrorFailedSharedMemSize:
                self = .full
            default: return nil
            }
        case let error as PSQLError:
            if let state = error.serverInfo?[.sqlState] {
                switch state {
                case "53100", "53200": self = .full            // disk_full, out_of_memory
                case "53300", "57P03": self = .unreachable     // too_many_connections, cannot_connect_now
                case "55P03", "40001", "40P01": self = .busy   // lock_not_available, serialization_failure, deadlock_detected
                default: return nil
                }
            } else {
                switch error.code {
                case .connectionError, .serverClosedConnection, .poolClosed: self = .unreachable
                default: return nil
                }
            }
        default:
            return nil
        }
    }
}
