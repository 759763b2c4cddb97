import Foundation
import Testing

@Suite("eventual-server's arguments: a malformed one is one line and exit 64", .timeLimit(.minutes(2)), .tags(.endToEnd))
struct ServerArgumentsTests {
    @Test(arguments: [["--port", "99999"], ["--port", "0"], ["--port=-1"], ["serve", "--port", "65536"], ["--port", "http"],
                      ["--bcrypt-cost", "2"], ["--max-events-per-user-per-day=-5"], ["--max-failed-verifications", "0"],
                      ["--database-pool", "0"], ["--database-pool=-3"], ["--database-pool", "1001"], ["--database-pool", "99999999999999999999"]])
    func aMalformedArgumentIsOneLineAndExit64AndNothingListens(_ arguments: [String]) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-arguments-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await BuiltExecutable.run("eventual-server", arguments + ["--database", folder.appendingPathComponent("db.sqlite").path])
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(arguments.first { $0.hasPrefix("--") }.map { String($0.prefix { $0 != "=" }) } ?? "?"), "\(result.stderr)")
        // Then the server never started: nothing listened, no database was made
        #expect(!result.stdout.contains("listening"), "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }

    @Test func aPortInUseIsOneLineSayingSoNotASystemCall() async throws {
        // Given a port something already listens on
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        #expect(listen(listener, 8) == 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-port-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // When a server is started on it
        let result = try await BuiltExecutable.run("eventual-server", ["--port", "\(port)", "--database", folder.appendingPathComponent("db.sqlite").path])
        // Then it stops with one line naming the address and what to do, never NIO's system call
        #expect(result.status == 1, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && result.stderr.contains("127.0.0.1:\(port) is already in use"), "\(result.stderr)")
        #expect(!result.stderr.contains("bind(") && !result.stderr.contains("errno"), "\(result.stderr)")
    }
}

/// `eventual-server apps check` (issue 47): one line per mistake with the file, line and place.
@Suite("eventual-server apps", .timeLimit(.minutes(2)), .tags(.endToEnd))
struct AppCommandTests {
    @Test func checkSaysEachMistakeOnALineAndAGoodFileIsOK() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-apps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("chores.app.yaml")
        let exported = try await BuiltExecutable.run("eventual-server", ["apps", "export", "chores"])
        #expect(exported.status == 0, "\(exported.stderr)")
        try exported.stdout.write(to: good, atomically: true, encoding: .utf8)
        let bad = folder.appendingPathComponent("bad.app.yaml")
        try "id: bad\ntitle: Bad\ncollections:\n  - name: pantry_items\n    fields:\n      id: { type: text }\n".write(to: bad, atomically: true, encoding: .utf8)

        let checked = try await BuiltExecutable.run("eventual-server", ["apps", "check", good.path, bad.path, folder.appendingPathComponent("none").path])
        #expect(checked.status == 1, "\(checked.stdout)\(checked.stderr)")
        let lines = checked.stdout.split(separator: "\n").map(String.init)
        #expect(lines == [
            "\(good.path): app chores (Chores): 1 collection(s), 5 field(s): no mistake",
            "\(bad.path):4: collections[0].name 'pantry_items' is a collection of the app pantry: choose another name",
            "\(bad.path):6: collections[0].fields.id is named like a column the engine keeps itself: choose another name",
            "\(folder.appendingPathComponent("none").path): cannot be read (no such file)",
        ], "\(checked.stdout)")
        #expect(try await BuiltExecutable.run("eventual-server", ["apps", "check", good.path]).status == 0)
        let unknown = try await BuiltExecutable.run("eventual-server", ["apps", "export", "nope"])
        #expect(unknown.status == 64 && unknown.stderr.contains("No built-in app is called nope"), "\(unknown.stderr)")
    }
}
