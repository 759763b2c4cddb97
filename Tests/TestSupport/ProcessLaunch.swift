import EventualAPI
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts child processes for tests.
public enum ProcessLaunch {
    private static let lock = NSLock()

    /// Starts `process` (Foundation), one launch at a time.
    public static func run(_ process: Process) throws {
        try launching { try process.run() }
    }

    /// Runs `body` (a pipe's creation, a spawn) while no other child is being started.
    public static func launching<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// A pipe whose two ends are closed on exec, so that a child started at the same moment by
    /// another test does not inherit them (an inherited write end keeps a reader from ever seeing
    /// the end of its input). posix_spawn's dup2 clears the flag on the copy a child is meant to get.
    /// NB: pipe2(O_CLOEXEC) is not visible from Swift's Glibc module; the flags are set while no
    /// child is being started, which is as good.
    public static func pipeClosedOnExec() throws -> [Int32] {
        try launching {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw TestFailure("pipe: \(String(cString: strerror(errno)))") }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            return ends
        }
    }

    /// What a child printed, and how it ended.
    public struct Output: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// Runs `executable` to its end and returns what it printed. The child is waited for on a
    /// thread of its own, never the cooperative pool, and writes its output to temporary files,
    /// never to pipes that could fill up while nobody reads them.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                           input: String? = nil) async throws -> Output {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out"), err = folder.appendingPathComponent("err")
        let status = try await offCooperativePool {
            try spawnAndWait(executable, arguments, environment: environment, input: input, stdout: out.path, stderr: err.path)
        }
        // NB: decoded with replacement characters, so that bytes that are not UTF-8 still show.
        return Output(status: status, stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }

    /// Runs `executable` with `arguments` and `environment`, `input` on its stdin and its stdout
    /// and stderr into files, and returns its exit status (128 + the signal when killed).
    ///
    /// NB: with posix_spawn directly, not Foundation's `Process`: with many children launched
    /// beside live servers, `Process.run()` crashed the test process inside its own memcpy on
    /// Linux (seen three times in full runs). Blocking: call it off the cooperative pool.
    public static func spawnAndWait(_ executable: String, _ arguments: [String], environment: [String: String],
                                    input: String?, stdout: String, stderr: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let stdinPipe = try pipeClosedOnExec()
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_addclose(&actions, stdinPipe[0])
        posix_spawn_file_actions_addclose(&actions, stdinPipe[1])
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = launching { posix_spawn(&pid, executable, &actions, nil, argv, envp) }
        close(stdinPipe[0])
        guard spawned == 0 else {
            close(stdinPipe[1])
            throw TestFailure("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        if let input {
            let bytes = Array(input.utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBufferPointer { write(stdinPipe[1], $0.baseAddress, $0.count) }
                if count <= 0 { break }
                written += count
            }
        }
        close(stdinPipe[1])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
