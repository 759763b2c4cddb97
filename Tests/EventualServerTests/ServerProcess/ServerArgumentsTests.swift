import EventualAPI
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
        let good = folder.appendingPathComponent("pantry.app.yaml")
        let exported = try await BuiltExecutable.run("eventual-server", ["apps", "export", "pantry"])
        #expect(exported.status == 0, "\(exported.stderr)")
        try exported.stdout.write(to: good, atomically: true, encoding: .utf8)
        let bad = folder.appendingPathComponent("bad.app.yaml")
        try "id: bad\ntitle: Bad\ncollections:\n  - name: pantry_items\n    fields:\n      id: { type: text }\n".write(to: bad, atomically: true, encoding: .utf8)

        let checked = try await BuiltExecutable.run("eventual-server", ["apps", "check", good.path, bad.path, folder.appendingPathComponent("none").path])
        #expect(checked.status == 1, "\(checked.stdout)\(checked.stderr)")
        let lines = checked.stdout.split(separator: "\n").map(String.init)
        #expect(lines == [
            "\(good.path): app pantry (Tracking My Pantry): 1 collection(s), \(SyncCollections.pantryItems.fields.count) field(s): no mistake",
            "\(bad.path):4: collections[0].name 'pantry_items' is a collection of the app pantry: choose another name",
            "\(bad.path):6: collections[0].fields.id is named like a column the engine keeps itself: choose another name",
            "\(folder.appendingPathComponent("none").path): cannot be read (no such file)",
        ], "\(checked.stdout)")
        #expect(try await BuiltExecutable.run("eventual-server", ["apps", "check", good.path]).status == 0)
        let unknown = try await BuiltExecutable.run("eventual-server", ["apps", "export", "nope"])
        #expect(unknown.status == 64 && unknown.stderr.contains("No built-in app is called 'nope'"), "\(unknown.stderr)")
        let control = try await BuiltExecutable.run("eventual-server", ["apps", "export", "no\u{1B}[2J"])
        #expect(control.status == 64 && control.stderr.contains("'no\\u{1b}[2J'") && !control.stderr.contains("\u{1B}"), "\(control.stderr)")
    }

    /// `apps deploy`, `list` and `show` on a database: a deploy, a repeat that changes nothing, a
    /// narrowing refused with its steps and exit 1, the files after it not deployed.
    @Test func deployListAndShowOnTheServersDatabase() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-deploy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = ["--database", folder.appendingPathComponent("server.sqlite").path]
        let shelf = folder.appendingPathComponent("shelf.app.yaml"), narrow = folder.appendingPathComponent("narrow.app.yaml")
        let later = folder.appendingPathComponent("later.app.yaml")
        try "id: shelf\ntitle: Shelf\ncollections:\n  - name: shelf_books\n    fields:\n      title: { type: string, maxLength: 90 }\n"
            .write(to: shelf, atomically: true, encoding: .utf8)
        try "id: shelf\ntitle: Shelf\nversion: 2\ncollections:\n  - name: shelf_books\n    fields:\n      title: { type: integer }\n"
            .write(to: narrow, atomically: true, encoding: .utf8)
        try "id: later\ntitle: Later\n".write(to: later, atomically: true, encoding: .utf8)

        let deployed = try await BuiltExecutable.run("eventual-server", ["apps", "deploy", shelf.path] + database)
        #expect(deployed.status == 0 && deployed.stdout == "\(shelf.path): deployed shelf (Shelf) at revision 4: running servers serve it within a second or two.\n",
                "\(deployed.stdout)\(deployed.stderr)")
        #expect(deployed.stderr.isEmpty, "no log lines on a command: \(deployed.stderr)")
        let again = try await BuiltExecutable.run("eventual-server", ["apps", "deploy", shelf.path] + database)
        #expect(again.status == 0 && again.stdout.contains("nothing changed"), "\(again.stdout)")
        let refused = try await BuiltExecutable.run("eventual-server", ["apps", "deploy", narrow.path, later.path] + database)
        #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stdout.split(separator: "\n").map(String.init) == [
            "\(narrow.path): collection shelf_books.fields.title.type changes from string to integer: a type change is refused: devices of"
                + " earlier versions still hold and send what it forbids; add a new field or collection instead, and deprecate the old one",
            "\(narrow.path): not deployed; nor the files after it",
        ], "\(refused.stdout)")

        let listed = try await BuiltExecutable.run("eventual-server", ["apps", "list"] + database)
        #expect(listed.status == 0 && listed.stdout.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }
            == ["sustainu", "spendiq", "pantry", "shelf"], "built-in first, then the deployed; later not deployed: \(listed.stdout)")
        let shown = try await BuiltExecutable.run("eventual-server", ["apps", "show", "shelf"] + database)
        #expect(shown.status == 0 && shown.stdout.hasPrefix("# shelf, version 1, revision 4, deployed at ") && shown.stdout.contains("maxLength: 90"),
                "\(shown.stdout)")

        // A second version that adds, said step by step; the first stays shown by its version.
        let second = folder.appendingPathComponent("second.app.yaml")
        try "id: shelf\ntitle: Shelf\nversion: 2\ncollections:\n  - name: shelf_books\n    fields:\n      title: { type: string, maxLength: 90 }\n"
            .appending("      shelf: { type: string, default: \"top\" }\n").write(to: second, atomically: true, encoding: .utf8)
        let checked = try await BuiltExecutable.run("eventual-server", ["apps", "check", second.path, "--against", database[1]])
        #expect(checked.status == 0 && checked.stdout.split(separator: "\n").map(String.init) == [
            "\(second.path): version 2 of shelf (Shelf) follows version 1 served: no mistake",
            "  shelf adds shelf_books.shelf (\"top\" by default)",
        ], "\(checked.stdout)\(checked.stderr)")
        let narrowChecked = try await BuiltExecutable.run("eventual-server", ["apps", "check", narrow.path, "--against", database[1]])
        #expect(narrowChecked.status == 1 && narrowChecked.stdout.contains("title.type changes from string to integer"), "\(narrowChecked.stdout)")
        let nowhere = try await BuiltExecutable.run("eventual-server", ["apps", "check", second.path, "--against", folder.appendingPathComponent("none.sqlite").path])
        #expect(nowhere.status == 1 && nowhere.stderr.contains("no database at"), "\(nowhere.stderr)")
        let upgraded = try await BuiltExecutable.run("eventual-server", ["apps", "deploy", second.path] + database)
        #expect(upgraded.status == 0 && upgraded.stdout.split(separator: "\n").map(String.init) == [
            "\(second.path): deployed version 2 of shelf (Shelf) at revision 5, from version 1: running servers serve it within a second or two.",
            "  shelf adds shelf_books.shelf (\"top\" by default)",
        ], "\(upgraded.stdout)\(upgraded.stderr)")
        let first = try await BuiltExecutable.run("eventual-server", ["apps", "show", "shelf", "--version", "1"] + database)
        #expect(first.status == 0 && first.stdout.hasPrefix("# shelf, version 1, revision 4") && !first.stdout.contains("top"), "\(first.stdout)")
        let never = try await BuiltExecutable.run("eventual-server", ["apps", "show", "shelf", "--version", "7"] + database)
        #expect(never.status == 1 && never.stderr.contains("'shelf' was never served at version 7: served were 1, 2"), "\(never.stderr)")
        let absurd = try await BuiltExecutable.run("eventual-server", ["apps", "show", "shelf", "--version", "0"] + database)
        #expect(absurd.status == 64 && absurd.stderr.contains("--version is a version of the app"), "\(absurd.stderr)")
        let missing = try await BuiltExecutable.run("eventual-server", ["apps", "show", "later"] + database)
        #expect(missing.status != 0 && missing.stderr.contains("no app 'later' is deployed"), "\(missing.stderr)")
    }
}
