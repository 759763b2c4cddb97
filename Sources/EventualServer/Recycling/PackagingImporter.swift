import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// Loads Open Food Facts packaging rows (one row per packaging part of a product) into the
/// packaging catalogue, grouped per barcode, idempotently: a barcode whose parts are the same as
/// stored is unchanged, one whose parts differ is replaced and gets a new catalogue version.
///
/// Columns are found by their header, in French as a retailer's export names them ("GTIN",
/// "Type d'emballage", "Matériau", "Poids unitaire vide en gramme", "Nombre d’unités de
/// composants") or in English ("code"/"barcode", "shape", "material", "weight", "units").
public struct PackagingImporter: Sendable {
    public typealias Summary = ProductImporter.Summary

    static let barcodesPerTransaction = 500
    static let maxShapeLength = 200

    private static let barcodeHeaders = ["gtin", "code", "barcode", "ean"]
    private static let shapeHeaders = ["type d'emballage", "shape", "packaging_shape"]
    private static let materialHeaders = ["matériau", "materiau", "material", "packaging_material"]
    private static let weightHeaders = ["poids unitaire vide en gramme", "weight", "weight_measured", "weight_specified", "grams"]
    private static let unitHeaders = ["nombre d'unités de composants", "number_of_units", "units"]

    let database: Database

    public init(database: Database) {
        self.database = database
    }

    public func importCSV(at url: URL) async throws -> Summary {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw RecyclingImportError.unreadable(path: url.path, reason: (error as NSError).localizedFailureReason ?? "cannot be read")
        }
        var rows = CSVReader(data)
        func nextRow() throws(RecyclingImportError) -> [String]? {
            do { return try rows.next() } catch { throw .notPackagingCSV(path: url.path, reason: error.description) }
        }
        guard let header = try nextRow() else { throw RecyclingImportError.notPackagingCSV(path: url.path, reason: "the file is empty") }
        let names = header.map(Self.headerKey)
        func column(_ candidates: [String]) -> Int? { candidates.lazy.compactMap { names.firstIndex(of: $0) }.first }
        guard let barcodeColumn = column(Self.barcodeHeaders), let materialColumn = column(Self.materialHeaders) else {
            throw RecyclingImportError.notPackagingCSV(path: url.path, reason: "the header has no barcode (GTIN, code) and material (Matériau) columns")
        }
        let shapeColumn = column(Self.shapeHeaders), weightColumn = column(Self.weightHeaders), unitColumn = column(Self.unitHeaders)

        var summary = Summary()
        var parts: [String: [PackagingPart]] = [:]
        var order: [String] = []
        while let row = try nextRow() {
            if row.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) { continue }
            func field(_ index: Int?) -> String {
                guard let index, index < row.count else { return "" }
                return row[index].trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard let gtin = try? GTIN(field(barcodeColumn)), let material = PackagingMaterial(describing: field(materialColumn)) else {
                summary.skipped += 1
                continue
            }
            let shape = field(shapeColumn)
            let weight = Self.number(field(weightColumn))
            let units = Self.number(field(unitColumn)) ?? 1
            let grams = weight.map { ($0 * max(1, units) * 100).rounded() / 100 }
            let part = PackagingPart(
                material: material,
                shape: shape.isEmpty || shape.unicodeScalars.count > Self.maxShapeLength || TextRules.problem(in: shape, .singleLine) != nil
                    ? nil : shape,
                grams: grams
            )
            if parts[gtin.normalized] == nil { order.append(gtin.normalized) }
            parts[gtin.normalized, default: []].append(part)
        }
        for start in stride(from: 0, to: order.count, by: Self.barcodesPerTransaction) {
            let batch = order[start..<min(start + Self.barcodesPerTransaction, order.count)].map { ($0, parts[$0]!) }
            let counts = try await database.transaction { sql in try await Self.apply(batch, on: sql) }
            summary.imported += counts.imported
            summary.updated += counts.updated
            summary.unchanged += counts.unchanged
        }
        return summary
    }

    private static func apply(_ batch: [(gtin: String, parts: [PackagingPart])], on sql: any SQLDatabase) async throws -> Summary {
        var counts = Summary()
        var stored: [String: (parts: String, source: String)] = [:]
        for row in try await sql.select().columns("gtin", "parts", "source").from("recycling_packaging")
            .where("gtin", .in, batch.map(\.gtin)).all() {
            stored[try row.decode(column: "gtin", as: String.self)] =
                (try row.decode(column: "parts", as: String.self), try row.decode(column: "source", as: String.self))
        }
        let now = UnixMillis.now()
        let source = ProductImporter.packagingSource.retailer
        for (gtin, parts) in batch {
            let json = try PackagingCatalogue.encode(parts)
            let existing = stored[gtin]
            if existing?.parts == json {
                // NB: the same parts a products import brought become this import's, so that a
                // later products import leaves them alone; devices see no change.
                if existing?.source != source {
                    try await sql.update("recycling_packaging").set("source", to: source).where("gtin", .equal, gtin).run()
                }
                counts.unchanged += 1
                continue
            }
            let version = try await RecyclingVersions.bump(.packaging, on: sql)
            if existing == nil {
                try await sql.insert(into: "recycling_packaging").columns("gtin", "parts", "version", "updated_at", "source")
                    .values(SQLBind(gtin), SQLBind(json), SQLBind(version), SQLBind(now), SQLBind(source)).run()
                counts.imported += 1
            } else {
                try await sql.update("recycling_packaging").set("parts", to: json).set("version", to: version)
                    .set("updated_at", to: now).set("source", to: source).where("gtin", .equal, gtin).run()
                counts.updated += 1
            }
        }
        return counts
    }

    /// A header cell reduced for matching: lower case, trimmed, typographic apostrophes made plain.
    private static func headerKey(_ cell: String) -> String {
        cell.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            .replacingOccurrences(of: "\u{2019}", with: "'").replacingOccurrences(of: "\u{2018}", with: "'")
    }

    /// A positive finite number written with a decimal point or comma ("6.05", "6,05").
    private static func number(_ text: String) -> Double? {
        guard let value = Double(text.replacingOccurrences(of: ",", with: ".")), value.isFinite, value > 0 else { return nil }
        return value
    }
}
