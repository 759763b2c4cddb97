import EventualAPI
import EventualKit
import Foundation
import GRDB

/// Barcode → packaging parts, for every product the server knows, kept on the device so that a
/// scanned barcode gets its bin offline. Fetched as changes since the saved version.
struct PackagingCatalogue: Sendable {
    let store: LocalStore
    let client: Client
    static let name = "packaging"
    static let pageSize = 5000

    /// Fetches what changed since the saved version, page by page. Returns the entries received.
    @discardableResult
    func refresh() async throws -> Int {
        var since = try await store.reader.read { db in try PointCatalogue.meta(name: Self.name, db)?.version } ?? 0
        var received = 0
        while true {
            let answer: Operations.GetRecyclingPackaging.Output
            do {
                answer = try await client.getRecyclingPackaging(query: .init(since: since, limit: Self.pageSize))
            } catch {
                throw RemoteFailure.from(error)
            }
            let page: Components.Schemas.PackagingPage
            switch answer {
            case .ok(let ok): page = try ok.body.json
            case .notModified: return received
            case .badRequest(let answer): throw RemoteFailure.status(400, message: try answer.body.json.message)
            case .undocumented(let status, _):
                throw RemoteFailure.undocumented(status, doing: "Loading the packaging catalogue")
            }
            let now = UnixMillis.now()
            let encoder = JSONEncoder.sortedKeys
            try await store.write { tx in
                let upsert = try tx.db.cachedStatement(sql: """
                    INSERT INTO packaging (gtin, parts) VALUES (?, ?) ON CONFLICT (gtin) DO UPDATE SET parts = excluded.parts
                    """)
                for entry in page.entries {
                    let parts = entry.parts.compactMap(PackagingPart.init)
                    try upsert.execute(arguments: [entry.barcode, String(decoding: try encoder.encode(parts), as: UTF8.self)])
                }
                try PointCatalogue.saveMeta(name: Self.name, etag: nil, version: page.version, fetchedAt: now, tx.db)
            }
            received += page.entries.count
            // NB: a server that answers the same version again would otherwise be asked forever.
            guard !page.complete, page.version > since else { return received }
            since = page.version
        }
    }

    /// The parts of a product's packaging, if the catalogue knows the barcode.
    func parts(of gtin: GTIN) throws -> [PackagingPart]? {
        try store.reader.read { db in
            try String.fetchOne(db, sql: "SELECT parts FROM packaging WHERE gtin = ?", arguments: [gtin.normalized])
        }
        .flatMap { try? JSONDecoder().decode([PackagingPart].self, from: Data($0.utf8)) }
    }

    func count() throws -> Int {
        try store.reader.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM packaging") ?? 0 }
    }
}

extension PackagingPart {
    init?(_ part: Components.Schemas.PackagingPart) {
        guard let material = PackagingMaterial(rawValue: part.material.rawValue) else { return nil }
        self.init(material: material, shape: part.shape, grams: part.grams)
    }
}

extension JSONEncoder {
    static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
