import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A real Eventual server for Chores' tests: the `eventual-server` built from the Eventual
/// repository (`EVENTUAL_SERVER`, else its debug build beside this package), on a loopback port
/// with a throwaway SQLite database, with Chores' declaration deployed to it first, as an
/// operator deploys it. Stopped (SIGTERM, then SIGKILL) when `body` ends.
func withLiveServer<T: Sendable>(_ body: @Sendable (_ server: URL, _ scratch: ScratchFolder) async throws -> T) async throws -> T {
    let scratch = try ScratchFolder()
    defer { scratch.remove() }
    let server = try ChoresServer.binary()
    let database = ["--database", scratch.url.appendingPathComponent("server.sqlite").path]
    let deployed = try await run(server, ["apps", "deploy", ChoresServer.declaration.path] + database)
    guard deployed.status == 0 else { throw TestFailure("apps deploy failed: \(deployed.stdout)\(deployed.stderr)") }
    let port = freePort()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: server)
    process.arguments = ["--port", String(port), "--hostname", "127.0.0.1", "--log-level", "error", "--bcrypt-cost", "4"] + database
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer {
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
    let url = URL(string: "http://127.0.0.1:\(port)")!
    let started = Date()
    while !(await ChoresServer.answers(url)) {
        guard process.isRunning, Date().timeIntervalSince(started) < 20 else { throw TestFailure("the server did not start on port \(port)") }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await body(url, scratch)
}

enum ChoresServer {
    /// This package's folder.
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let declaration = package.appendingPathComponent("Sources/Chores/Resources/chores.app.yaml")

    /// The server's executable, or a failure that says how to build it.
    static func binary() throws -> String {
        let path = ProcessInfo.processInfo.environment["EVENTUAL_SERVER"]
            ?? package.appendingPathComponent("../../.build/debug/eventual-server").standardizedFileURL.path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestFailure("no eventual-server at \(path): build it in the Eventual repository (swift build --product eventual-server)"
                + " or name it in EVENTUAL_SERVER")
        }
        return path
    }

    static func answers(_ url: URL) async -> Bool {
        guard let (_, response) = try? await URLSession.shared.data(from: url.appendingPathComponent("health")) else { return false }
        return (response as? HTTPURLResponse)?.statusCode == 200
    }
}

/// A loopback port that was free a moment ago.
func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A loopback address where nothing listens: the server as seen from a basement.
let unreachableServer = URL(string: "http://127.0.0.1:\(freePort())")!

/// A folder for one test, removed after it.
struct ScratchFolder: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("chores-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func folder(_ name: String) -> URL { url.appendingPathComponent(name) }
    func remove() { try? FileManager.default.removeItem(at: url) }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What a finished command said.
struct CommandOutcome: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String

    /// One line on stderr and nothing on stdout: how every command says a mistake.
    var isOneLineError: Bool { status != 0 && stdout.isEmpty && stderr.split(separator: "\n").count == 1 && stderr.hasSuffix("\n") }

    func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(stdout.utf8)) }
}

/// Runs `executable` to its end (killed after `limit` seconds), with `input` on stdin.
func run(_ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String] = [:],
         limit: TimeInterval = 60) async throws -> CommandOutcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let folder = try ScratchFolder()
    defer { folder.remove() }
    let out = folder.folder("stdout"), err = folder.folder("stderr"), inFile = folder.folder("stdin")
    for file in [out, err, inFile] { FileManager.default.createFile(atPath: file.path, contents: nil) }
    try Data((input ?? "").utf8).write(to: inFile)
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    process.standardInput = try FileHandle(forReadingFrom: inFile)
    try process.run()
    let deadline = Date().addingTimeInterval(limit)
    while process.isRunning {
        if Date() > deadline {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("\(executable) \(arguments) ran past \(Int(limit)) s")
        }
        try await Task.sleep(for: .milliseconds(10))
    }
    return CommandOutcome(status: process.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
                          stderr: try String(contentsOf: err, encoding: .utf8))
}

/// The `chores` command on one device (its data folder), against `server`.
struct CommandProcess: Sendable {
    let dataDirectory: URL
    let server: URL

    init(_ name: String, dataDirectory: URL, server: URL) {
        self.dataDirectory = dataDirectory
        self.server = server
    }

    /// The `chores` built beside these tests.
    static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chores").path

    func run(_ arguments: [String], input: String? = nil, server: URL? = nil) async throws -> CommandOutcome {
        let executable = FileManager.default.isExecutableFile(atPath: Self.executable) ? Self.executable
            : ChoresServer.package.appendingPathComponent(".build/debug/chores").path
        return try await ChoresTests.run(executable, arguments, input: input, environment: [
            "CHORES_DATA_DIR": dataDirectory.path, "CHORES_SERVER": (server ?? self.server).absoluteString, "CHORES_ANSWER_TIMEOUT": "20",
        ])
    }

    /// Registers and signs in someone new called `person` with a unique suffix.
    func signUp(name person: String) async throws -> (email: String, username: String) {
        let suffix = UUID().uuidString.prefix(6).lowercased()
        let email = "\(person).\(suffix)@example.com", username = "\(person)_\(suffix)"
        let registered = try await run(["register", "--username", username, "--email", email, "--password-stdin"], input: "long-password\n")
        #expect(registered.status == 0, "\(registered.stderr)")
        let login = try await run(["login", "--email", email, "--password-stdin"], input: "long-password\n")
        #expect(login.status == 0 && login.stdout.contains("Signed in as \(username)."), "\(login.stdout)\(login.stderr)")
        return (email, username)
    }
}
