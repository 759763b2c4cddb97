import ArgumentParser
import EventualServer
import Foundation
import Logging

/// `eventual-server import-products FILE`: loads an Open Food Facts CSV into the knowledge base.
struct ImportProducts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-products",
        abstract: "Load an Open Food Facts CSV export into the knowledge base.",
        discussion: """
            Reads the columns code, product_name, brands and quantity, and the packaging's materials from \
            packaging_tags (or packaging): they go to the packaging catalogue, so that a scan names each \
            part's bin, unless import-packaging brought that barcode's parts. Rows whose barcode is not a valid \
            EAN-8, UPC-A, EAN-13 or GTIN-14, or that have no name, are skipped and counted. Products belong \
            to the system user "Open Food Facts", which cannot sign in. Importing the same file again changes \
            nothing; a newer export updates names in place. Prints one line: \
            imported N, updated N, unchanged N, skipped N.
            """
    )

    @Argument(help: "The CSV file (for example SampleData/off-products-1000-slim.csv).")
    var file: String

    @OptionGroup var database: DatabaseOption

    func run() async throws {
        try requireReadable(file)
        let url = URL(fileURLWithPath: file)
        print(try await withDatabase(database) { try await ProductImporter(database: $0).importCSV(at: url) })
    }
}

/// Refuses a file that cannot be read. NB: checked before the database is opened, so that a
/// mistyped path creates no database.
func requireReadable(_ file: String) throws {
    guard FileManager.default.isReadableFile(atPath: file) else {
        throw ImportFailure(message: "cannot read \(file): no such file, or not readable")
    }
}

/// A failure printed as one line, with a non-zero exit status.
struct ImportFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
