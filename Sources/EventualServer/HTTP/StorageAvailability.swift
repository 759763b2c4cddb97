import PostgresKit
import SQLiteNIO

/// Storage failures that are nobody's fault in the request and pass with time: the database is
/// locked by another process, its disk is full, or it cannot be reached. They are answered 503
/// with `Retry-After` (clients retry 503), instead of a 500 that says the server is broken.
enum StorageAvailability {
    case busy
    case full
    case unreachable

    /// Seconds a client should wait before retrying.
    var retryAfterSeconds: Int {
        switch self {
        case .busy: return 1
        case .full: return 30
        case .unreachable: return 5
        }
    }

    var message: String {
        switch self {
        case .busy: return "The database is busy with another writer; retry in a moment"
        case .full: return "The server's storage is full: changes cannot be saved right now (reading still works); retry later"
        case .unreachable: return "The database cannot be reached right now; retry in a moment"
        }
    }

    /// The availability problem `error` reports, if it is one.
    init?(_ error: any Error) {
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
