import EventualAPI
import EventualStorage
import Foundation
import SQLKit

/// The packaging catalogue: barcode (GTIN-14) to the parts of the product's packaging.
struct PackagingCatalogue: Sendable {
    let database: Database

    /// One page of changes.
    struct Page: Sendable {
        let version: Int64
        let complete: Bool
        let entries: [(gtin: String, parts: [PackagingPart])]
    }

    /// The stored form of parts: JSON with sorted keys, so that equal parts store equal text.
    static func encode(_ parts: [PackagingPart]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(parts), as: UTF8.self)
    }

    static func decode(_ text: String) throws -> [PackagingPart] {
        do {
            return try JSONDecoder().decode([PackagingPart].self, from: Data(text.utf8))
        } catch {
            throw StorageError.corrupt("packaging parts that are not PackagingPart JSON")
        }
    }

    /// The parts stored for a GTIN (one read by primary key), or nil.
    func parts(gtin: String) async throws -> [PackagingPart]? {
        if let reader = database.fastReader {
            var text: String?
            try reader.read { connection in
                try connection.query(Self.partsSQL, [gtin]) { row in text = row.text(0) }
            }
            return try text.map(Self.decode)
        }
        return try await database.withConnection { sql in
            try await sql.select().column("parts").from("recycling_packaging").where("gtin", .equal, gtin).first()
                .map { try Self.decode(try $0.decode(column: "parts", as: String.self)) }
        }
    }

    static let partsSQL = "SELECT parts FROM recycling_packaging WHERE gtin = ?"

    /// The catalogue's current version (its ETag).
    func version() async throws -> Int64 {
        try await database.withConnection { sql in try await RecyclingVersions.value(.packaging, on: sql) }
    }

    /// At most `limit` entries changed after version `since`, oldest change first.
    func changes(since: Int64, limit: Int) async throws -> Page {
        try await database.withConnection { sql in
            // NB: the version is read first: every change numbered up to it has committed (a change
            // takes its number in its own transaction), so no page can skip one still in flight.
            let current = try await RecyclingVersions.value(.packaging, on: sql)
            let rows = try await sql.select().columns("gtin", "parts", "version").from("recycling_packaging")
                .where("version", .greaterThan, since).where("version", .lessThanOrEqual, current)
                .orderBy("version", .ascending).limit(limit + 1).all()
            var entries: [(gtin: String, parts: [PackagingPart])] = []
            var last = since
            for row in rows.prefix(limit) {
                entries.append((try row.decode(column: "gtin", as: String.self), try Self.decode(try row.decode(column: "parts", as: String.self))))
                last = try row.decode(column: "version", as: Int64.self)
            }
            let complete = rows.count <= limit
            return Page(version: complete ? current : last, complete: complete, entries: entries)
        }
    }
}

extension Components.Schemas.PackagingPart {
    init(_ part: PackagingPart) {
        self.init(material: Components.Schemas.PackagingPart.MaterialPayload(rawValue: part.material.rawValue)!,
                  shape: part.shape, grams: part.grams)
    }

    /// A part of a scanned product, with where it goes.
    static func scanned(_ part: PackagingPart) -> Self {
        let bin = part.trashType.bin
        return Self(material: Components.Schemas.PackagingPart.MaterialPayload(rawValue: part.material.rawValue)!,
                  shape: part.shape, grams: part.grams,
                  trashType: Components.Schemas.TrashType(rawValue: part.trashType.rawValue),
                  bin: Components.Schemas.BinColour(rawValue: bin.colour), binLabel: bin.label)
    }
}
