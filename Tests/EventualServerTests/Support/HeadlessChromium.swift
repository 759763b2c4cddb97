import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real headless Chromium (Debian's `chromium`), driven over the DevTools protocol on a pipe
/// (`--remote-debugging-pipe`: commands in on fd 3, answers and events out on fd 4, each a JSON
/// message ended by a NUL). No WebSocket, no extra package.
///
/// Blocking: call it from a thread of its own (`offCooperativePool`), never from the
/// cooperative pool that the server under test answers on.
final class HeadlessChromium {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static let executable = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    private let pid: pid_t
    private let toBrowser: Int32
    private let fromBrowser: Int32
    private let profile: URL
    private var buffer: [UInt8] = []
    private var events: [[String: Any]] = []
    private var nextID = 1
    private var session: String?

    /// Starts Chromium with a fresh profile and a phone-sized window, and opens a page.
    init(width: Int = 412, height: Int = 915) throws {
        guard let executable = Self.executable else {
            throw Failure(description: "Chromium is not installed: apt-get install chromium (.ci/run installs it)")
        }
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        let commands = try ProcessLaunch.pipeClosedOnExec(), answers = try ProcessLaunch.pipeClosedOnExec()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, commands[0], 3)
        posix_spawn_file_actions_adddup2(&actions, answers[1], 4)
        for fd in commands + answers { posix_spawn_file_actions_addclose(&actions, fd) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, profile.appendingPathComponent("stderr.log").path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let arguments = [executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                         "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--mute-audio",
                         "--remote-debugging-pipe", "--user-data-dir=\(profile.path)", "--window-size=\(width),\(height)", "about:blank"]
        let argv = arguments.map { strdup($0) } + [nil]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = profile.path
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = ProcessLaunch.launching { posix_spawn(&pid, executable, &actions, nil, argv, envp) }
        close(commands[0])
        close(answers[1])
        guard spawned == 0 else {
            close(commands[1])
            close(answers[0])
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        toBrowser = commands[1]
        fromBrowser = answers[0]
        let created = try call("Target.createTarget", ["url": "about:blank"], inSession: false)
        guard let target = created["targetId"] as? String else { throw Failure(description: "no target: \(created)") }
        let attached = try call("Target.attachToTarget", ["targetId": target, "flatten": true], inSession: false)
        session = attached["sessionId"] as? String
        _ = try call("Page.enable")
        _ = try call("Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": true])
    }

    /// Loads `url` and waits for its load event.
    func open(_ url: String) throws {
        events.removeAll()
        let answer = try call("Page.navigate", ["url": url])
        if let problem = answer["errorText"] as? String { throw Failure(description: "navigating to \(url): \(problem)") }
        try waitFor("Page.loadEventFired")
    }

    /// Runs `script` in the page and returns its value (JSON-compatible).
    func evaluate(_ script: String) throws -> Any? {
        let answer = try call("Runtime.evaluate", ["expression": script, "returnByValue": true])
        if let exception = answer["exceptionDetails"] { throw Failure(description: "script failed: \(exception)") }
        return (answer["result"] as? [String: Any])?["value"]
    }

    /// Runs `script`, which submits a form or follows a link, and waits for the next page to load.
    func navigate(by script: String) throws {
        events.removeAll()
        _ = try evaluate(script)
        try waitFor("Page.loadEventFired")
    }

    /// A PNG of the whole page, however long.
    func screenshot(to file: URL) throws {
        let metrics = try call("Page.getLayoutMetrics")
        let size = (metrics["cssContentSize"] ?? metrics["contentSize"]) as? [String: Any]
        let height = min(16_000, Int((size?["height"] as? Double) ?? 915))
        _ = try call("Emulation.setDeviceMetricsOverride", ["width": 412, "height": max(height, 100), "deviceScaleFactor": 1, "mobile": true])
        let shot = try call("Page.captureScreenshot", ["format": "png", "captureBeyondViewport": true])
        guard let text = shot["data"] as? String, let data = Data(base64Encoded: text) else { throw Failure(description: "no screenshot") }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
        _ = try call("Emulation.setDeviceMetricsOverride", ["width": 412, "height": 915, "deviceScaleFactor": 1, "mobile": true])
    }

    func quit() {
        _ = try? call("Browser.close", inSession: false, timeout: 5)
        close(toBrowser)
        close(fromBrowser)
        var status: Int32 = 0
        for _ in 0..<50 {
            if waitpid(pid, &status, WNOHANG) == pid { break }
            usleep(100_000)
        }
        if waitpid(pid, &status, WNOHANG) == 0 {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(at: profile)
    }

    // MARK: The protocol

    @discardableResult
    private func call(_ method: String, _ params: [String: Any] = [:], inSession: Bool = true, timeout: Double = 30) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if inSession, let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBufferPointer { write(toBrowser, $0.baseAddress, $0.count) }
            guard count > 0 else { throw Failure(description: "Chromium closed its pipe (\(method))") }
            written += count
        }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let message = try receive(until: deadline, waitingFor: method)
            if message["id"] as? Int == id {
                if let error = message["error"] { throw Failure(description: "\(method): \(error)") }
                return message["result"] as? [String: Any] ?? [:]
            }
            if message["method"] != nil { events.append(message) }
        }
    }

    private func waitFor(_ event: String, timeout: Double = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let index = events.firstIndex(where: { $0["method"] as? String == event }) {
                events.removeSubrange(...index)
                return
            }
            let message = try receive(until: deadline, waitingFor: event)
            if message["method"] != nil { events.append(message) }
        }
    }

    private func receive(until deadline: Date, waitingFor what: String) throws -> [String: Any] {
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let data = Data(buffer[..<end])
                buffer.removeSubrange(...end)
                return (try JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw Failure(description: "Chromium did not answer \(what) in time") }
            var descriptor = pollfd(fd: fromBrowser, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(left, 1) * 1000))
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = read(fromBrowser, &chunk, chunk.count)
            guard count > 0 else { throw Failure(description: "Chromium exited (waiting for \(what))") }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}
