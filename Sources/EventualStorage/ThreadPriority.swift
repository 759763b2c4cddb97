#if canImport(Glibc)
import Glibc
#endif

/// The scheduler's priority of the calling thread (its nice value: lower runs first).
///
/// On a machine whose cores are all busy, the threads the server starts for itself do not all
/// matter alike: the SQLite writer is the one thread every write waits for, and a bcrypt hash is
/// a quarter of a second of one core that a person waits for once a week. Left at the same
/// priority as the request handlers, the hashing of a steady trickle of logins took a whole core
/// and held other requests up for seconds.
public enum ThreadPriority {
    /// Lowers the calling thread's priority to `nice` (1 to 19); always allowed.
    public static func lower(to nice: Int32) {
        #if os(Linux)
        // NB: on Linux the nice value belongs to a thread, and 0 names the calling one.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice)
        #endif
    }

    /// Raises the calling thread's priority as far as the first of `nices` allowed (raising one
    /// needs CAP_SYS_NICE or an RLIMIT_NICE above 20); otherwise it stays as it is.
    public static func raise(toOneOf nices: [Int32]) {
        #if os(Linux)
        for nice in nices where setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) == 0 {
            return
        }
        #endif
    }
}
