import Foundation
import Logging
import SQLKit
import Testing
@testable import EventualServer

@Suite("eventual-server import-products", .timeLimit(.minutes(3)))
struct ImportProductsTests {
    static let sample = SampleData.file("off-products-1000-slim.csv")

    @Test(arguments: Backend.available)
    func importingTwiceChangesNothingTheSecondTime(_ backend: Backend) async throws {
        try await withServer(backend) { api, location in
            let database = try await Database.open(location, logger: Logger(label: "test"))
            let csv = try Self.csv("""
                code,product_name,brands,quantity
                4006381333931,Stabilo pen,"Stabilo, Swano",1 pc
                96385074,"Quoted ""name"", with comma",,
                12345,Bad barcode,,
                4006381333932,Wrong check digit,,
                5000112548167,,,
                """)
            // When the file is imported twice
            let first = try await ProductImporter(database: database).importCSV(at: csv)
            let second = try await ProductImporter(database: database).importCSV(at: csv)
            // Then the first imports the valid rows and the second changes nothing
            #expect(first == .init(imported: 2, updated: 0, unchanged: 0, skipped: 3))
            #expect(second == .init(imported: 0, updated: 0, unchanged: 2, skipped: 3))
            #expect(first.description == "imported 2, updated 0, unchanged 0, skipped 3")
            let count = try await database.withConnection { sql in
                try await sql.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("products").first()?
                    .decode(column: "n", as: Int.self)
            }
            #expect(count == 2)
            // And a newer export updates in place
            let newer = try Self.csv("code,product_name,brands,quantity\n4006381333931,Stabilo pen 2,Stabilo,1 pc\n")
            #expect(try await ProductImporter(database: database).importCSV(at: newer).updated == 1)
            await database.close()
            // And the products are found by their barcode, owned by a user nobody can sign in as
            let account = try await api.signUp()
            let products = try await api.products("4006381333931", as: account)
            #expect(products.map(\.name) == ["Stabilo pen 2"])
            #expect(products.first?.description == "Stabilo · 1 pc")
            #expect(try await api.products("96385074", as: account).map(\.name) == [#"Quoted "name", with comma"#])
            #expect(try await api.login(email: ProductImporter.systemUser.email, password: "").status != .created)
            #expect(try await api.login(email: ProductImporter.systemUser.email, password: "!system-user-cannot-sign-in").status == .unauthorized)
        }
    }

    @Test(.tags(.endToEnd)) func theCommandImportsTheSampleTwiceWithTheSameCountAndSaysSoOnOneLine() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-import-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("kb.sqlite").path
        let first = try await Self.run(["import-products", Self.sample.path, "--database", database])
        let second = try await Self.run(["import-products", Self.sample.path, "--database", database])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(second.status == 0, "\(second.stderr)")
        let firstLine = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let secondLine = second.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(firstLine.hasPrefix("imported ") && !firstLine.contains("\n"), "\(firstLine)")
        #expect(secondLine.hasPrefix("imported 0, updated 0, unchanged "), "\(secondLine)")
        // The same rows are skipped both times, and the second run finds every imported row unchanged
        let imported = Int(firstLine.split(separator: " ")[1].dropLast())
        let unchanged = Int(secondLine.split(separator: " ")[5].dropLast())
        #expect(imported != nil && imported == unchanged)
        #expect(firstLine.split(separator: ",").last == secondLine.split(separator: ",").last)
    }

    @Test(.tags(.endToEnd)) func aBadPathIsAOneLineErrorAndANonZeroExit() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-import-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await Self.run(["import-products", "/no/such/file.csv", "--database", folder.appendingPathComponent("kb.sqlite").path])
        #expect(result.status != 0)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("/no/such/file.csv"))
        #expect(!FileManager.default.fileExists(atPath: folder.path), "no database is created for a mistyped path")
    }

    @Test(.tags(.endToEnd)) func helpDescribesTheCommand() async throws {
        let result = try await Self.run(["import-products", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Open Food Facts"))
        #expect(result.stdout.contains("--database"))
    }

    private static func csv(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).csv")
        try Data(text.utf8).write(to: url)
        return url
    }


    private static func run(_ arguments: [String]) async throws -> CommandOutcome {
        try await BuiltExecutable.run("eventual-server", arguments)
    }
}
