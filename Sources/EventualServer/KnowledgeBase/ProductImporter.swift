import EventualAPI
import Foundation
import SQLKit

/// Loads an Open Food Facts CSV export into the knowledge base, idempotently: a product is keyed
/// by its barcode (as a 14-digit GTIN) among the products of the import's own user, so importing
/// the same file twice changes nothing, and importing a newer export updates names in place.
///
/// The packaging columns (`packaging_tags`, else `packaging`) go to the packaging catalogue, so
/// that a scan of the barcode names each part's bin; parts a packaging import brought (a
/// retailer's, with weights) are never replaced by these.
///
/// Imported products belong to a system user, "Open Food Facts", that cannot sign in: its
/// password hash is not a bcrypt hash, so no password matches it, and its username and email are
/// ones registration refuses, so nobody can claim them.
public struct ProductImporter: Sendable {
    /// What an import did.
    public struct Summary: Sendable, Equatable, CustomStringConvertible {
        public var imported = 0
        public var updated = 0
        public var unchanged = 0
        /// Rows without a valid barcode or a usable name, and repeats of a barcode within the file.
        public var skipped = 0

        public var description: String {
            "imported \(imported), updated \(updated), unchanged \(unchanged), skipped \(skipped)"
        }
    }

    /// The system user that owns imported products.
    static let systemUser = (id: "system-open-food-facts", username: "Open Food Facts", email: "open-food-facts@system")
    static let rowsPerTransaction = 500

    let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// Imports the CSV at `url` (columns `code` and `product_name`; `brands` and `quantity` make the
    /// description; `packaging_tags` or `packaging` the packaging's parts).
    public func importCSV(at url: URL) async throws -> Summary {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ImportError.unreadable(path: url.path, reason: (error as NSError).localizedFailureReason ?? "cannot be read")
        }
        var rows = CSVReader(data)
        func nextRow() throws(ImportError) -> [String]? {
            do { return try rows.next() } catch { throw .notCSV(path: url.path, reason: error.description) }
        }
        guard let header = try nextRow() else { throw ImportError.notCSV(path: url.path, reason: "the file is empty") }
        let column = Dictionary(header.enumerated().map { ($1.trimmingCharacters(in: .whitespaces), $0) }) { first, _ in first }
        guard let codeColumn = column["code"], let nameColumn = column["product_name"] else {
            throw ImportError.notCSV(path: url.path, reason: "the header has no 'code' and 'product_name' columns")
        }
        var summary = Summary()
        var candidates: [String: Candidate] = [:]
        var order: [String] = []
        while let row = try nextRow() {
            func field(_ index: Int?) -> String {
                guard let index, index < row.count else { return "" }
                return row[index].trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard let candidate = Candidate(code: field(codeColumn), name: field(nameColumn),
                                            brands: field(column["brands"]), quantity: field(column["quantity"]),
                                            packaging: OpenFoodFactsPackaging.parts(tags: field(column["packaging_tags"]),
                                                                                    text: field(column["packaging"]))) else {
                summary.skipped += 1
                continue
            }
            // NB: a barcode repeated in the file keeps its last row, so that a second import finds every row unchanged.
            if candidates.updateValue(candidate, forKey: candidate.gtin) == nil {
                order.append(candidate.gtin)
            } else {
                summary.skipped += 1
            }
        }
        try await ensureSystemUser()
        for start in stride(from: 0, to: order.count, by: Self.rowsPerTransaction) {
            let batch = order[start..<min(start + Self.rowsPerTransaction, order.count)].map { candidates[$0]! }
            let counts = try await database.transaction { sql in try await Self.apply(batch, on: sql) }
            summary.imported += counts.imported
            summary.updated += counts.updated
            summary.unchanged += counts.unchanged
        }
        return summary
    }

    private func ensureSystemUser() async throws {
        let user = Self.systemUser
        let now = UnixMillis.now()
        try await database.withConnection { sql in
            try await sql.insert(into: "users")
                .columns("id", "username", "username_key", "email", "email_key", "password_hash", "created_at", "updated_at")
                .values(SQLBind(user.id), SQLBind(user.username), SQLBind(AccountRules.key(user.username)),
                        SQLBind(user.email), SQLBind(AccountRules.key(user.email)),
                        // NB: not a bcrypt hash: no password verifies against it, so nobody signs in as this user.
                        SQLBind("!system-user-cannot-sign-in"), SQLBind(now), SQLBind(now))
                .ignoringConflicts(with: ["id"])
                .run()
        }
    }

    private static func apply(_ batch: [Candidate], on sql: any SQLDatabase) async throws -> Summary {
        var counts = Summary()
        let now = UnixMillis.now()
        let packagingChanged = try await applyPackaging(batch, now: now, on: sql)
        for candidate in batch {
            let existing = try await sql.select().columns("id", "name", "description").from("products")
                .where("gtin", .equal, candidate.gtin).where("user_id", .equal, systemUser.id)
                .first()
            guard let existing else {
                try await sql.insert(into: "products").columns(ProductRecord.columns)
                    .values(SQLBind(UUID().uuidString.lowercased()), SQLBind(candidate.gtin), SQLBind(candidate.barcode),
                            SQLBind(candidate.name), SQLBind(candidate.description), SQLBind(String?.none), SQLBind(systemUser.id),
                            SQLBind(Int64(0)), SQLBind(now), SQLBind(now))
                    .run()
                counts.imported += 1
                continue
            }
            let name = try existing.decode(column: "name", as: String.self)
            let description = try existing.decode(column: "description", as: String?.self)
            guard name != candidate.name || description != candidate.description else {
                if packagingChanged.contains(candidate.gtin) { counts.updated += 1 } else { counts.unchanged += 1 }
                continue
            }
            try await sql.update("products").set("name", to: candidate.name).set("description", to: candidate.description)
                .set("updated_at", to: now).where("id", .equal, try existing.decode(column: "id", as: String.self)).run()
            counts.updated += 1
        }
        return counts
    }

    /// Writes the batch's packaging parts to the catalogue where they changed (each change a new
    /// catalogue version), and answers the GTINs changed. A barcode whose parts came from a
    /// packaging import keeps them; one whose parts this import brought and a newer export no
    /// longer names gets an empty list, so that devices forget the old parts too.
    private static func applyPackaging(_ batch: [Candidate], now: Int64, on sql: any SQLDatabase) async throws -> Set<String> {
        var stored: [String: (parts: String, source: String)] = [:]
        for row in try await sql.select().columns("gtin", "parts", "source").from("recycling_packaging")
            .where("gtin", .in, batch.map(\.gtin)).all() {
            stored[try row.decode(column: "gtin", as: String.self)] =
                (try row.decode(column: "parts", as: String.self), try row.decode(column: "source", as: String.self))
        }
        var changed: Set<String> = []
        for candidate in batch {
            let existing = stored[candidate.gtin]
            guard existing?.source != packagingSource.retailer else { continue }
            if existing == nil && candidate.packaging.isEmpty { continue }
            let json = try PackagingCatalogue.encode(candidate.packaging)
            guard existing?.parts != json else { continue }
            let version = try await RecyclingVersions.bump(.packaging, on: sql)
            if existing == nil {
                try await sql.insert(into: "recycling_packaging").columns("gtin", "parts", "version", "updated_at", "source")
                    .values(SQLBind(candidate.gtin), SQLBind(json), SQLBind(version), SQLBind(now), SQLBind(packagingSource.products)).run()
            } else {
                try await sql.update("recycling_packaging").set("parts", to: json).set("version", to: version).set("updated_at", to: now)
                    .where("gtin", .equal, candidate.gtin).where("source", .equal, packagingSource.products).run()
            }
            changed.insert(candidate.gtin)
        }
        return changed
    }

    /// The values of `recycling_packaging.source`.
    static let packagingSource = (retailer: "packaging", products: "products")

    /// One row that can become a product.
    private struct Candidate {
        let gtin: String
        let barcode: String
        let name: String
        let description: String?
        let packaging: [PackagingPart]

        init?(code: String, name: String, brands: String, quantity: String, packaging: [PackagingPart]) {
            guard let gtin = try? GTIN(validating: code), !name.isEmpty, APIService.nameLengths.contains(name.count),
                  TextRules.problem(in: name, .singleLine) == nil
            else { return nil }
            self.gtin = gtin.normalized
            barcode = code
            self.name = name
            let brand = brands.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            let parts = [brand, quantity].filter { !$0.isEmpty && TextRules.problem(in: $0, .singleLine) == nil }
            let joined = parts.joined(separator: " · ")
            description = joined.isEmpty ? nil : String(joined.prefix(APIService.maxDescriptionLength))
            self.packaging = packaging
        }
    }
}

/// Why an import could not start.
public enum ImportError: Error, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case notCSV(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .notCSV(let path, let reason): return "\(path) is not an Open Food Facts CSV: \(reason)"
        }
    }
}
