import Foundation

/// Starts child processes one at a time.
///
/// NB: Foundation's `Process.run()` on Linux is not safe to call from several threads at once:
/// with the command-line, import, server-process and crash tests launching children in parallel,
/// the test process crashed inside it (a bad read in its memcpy). Only the launch is serialised;
/// the children then run, and are waited for, in parallel.
public enum ProcessLaunch {
    private static let lock = NSLock()

    public static func run(_ process: Process) throws {
        lock.lock()
        defer { lock.unlock() }
        try process.run()
    }
}
