import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

extension SoakRun {
    /// What every device must hold after healing and settling: nothing waiting; what the people
    /// did, their refused changes as they settled them; exactly the server's record of everything
    /// its person can see, row by row (same ids, same values, deleted ones absent); no record of
    /// a space its person was removed from; every photo of what it holds, byte for byte.
    func verify(_ model: SoakIntent, people: SoakPeople) async throws -> [String] {
        var problems: [String] = []
        let firstOnServer = try await serverRows(of: credentials, as: "first", &problems)
        let secondOnServer = try await serverRows(of: secondCredentials, as: "second", &problems)
        let held: [(name: String, device: Device, places: Set<SoakPlace>, server: [String: Row])] = [
            ("A", a, [.first, .shared], firstOnServer), ("B", b, [.first, .shared], firstOnServer),
            ("C", c, people.secondPlaces, secondOnServer),
        ]
        for (name, device, places, server) in held {
            let expected = model.expected(in: places)
            let counts = try device.outbox.counts()
            if counts != OutboxCounts() {
                let entries = try device.outbox.entries()
                problems.append("\(name) outbox not empty: \(counts) \(entries.map { "\($0.operation) \($0.state) \($0.lastError ?? "")" })")
            }
            let items = try device.itemsWithStatus()
            if items != expected { problems.append("\(name) holds \(items), expected \(expected)") }
            // The brands the people set, on an upgraded device in its column, on another kept.
            for item in expected {
                let brand = try device.brand(of: item.id)
                if brand != model.brand(of: item.id) {
                    problems.append("\(name) holds the brand \(brand ?? "none") of \(item.id), expected \(model.brand(of: item.id) ?? "none")")
                }
            }
            problems += Self.differences(try device.rows(), from: server, on: name)
            let photos = try await photoProblems(of: name, device, holding: expected, model, shared: people.shared)
            problems += photos
        }
        if people.secondRole == nil {
            let left = try await c.store.reader.read { db in
                try String.fetchAll(db, sql: "SELECT id FROM items WHERE space_id = ?", arguments: [people.shared])
            }
            if !left.isEmpty { problems.append("C, removed from the shared space, still holds its records \(left)") }
        }
        for barcode in model.postedBarcodes {
            guard case .ok(let answer) = try await direct.client.getProducts(query: .init(barcode: barcode)) else {
                problems.append("lookup of \(barcode) failed")
                continue
            }
            let count = try answer.body.json.products.count
            if count != 1 { problems.append("barcode \(barcode) has \(count) products, expected exactly 1") }
        }
        return problems
    }

    /// The rows of everything a person can see as the server holds it: what a new device of
    /// theirs holds after its first pull, made around the proxy, by record id.
    private func serverRows(of person: (email: String, password: String), as label: String, _ problems: inout [String]) async throws
        -> [String: Row] {
        // NB: at the pantry's newest version, so that its rows hold every column an upgraded device has.
        let fresh = try Device(folder: folder.appendingPathComponent("\(label)-new"), serverURL: serverURL,
                               collection: pantryV2.collection("pantry_items"), app: pantryV2)
        try await fresh.vault.signIn(email: person.email, password: person.password, client: fresh.link.client)
        let report = await fresh.engine.syncNow()
        if let failure = report.failure { problems.append("a new device of the \(label) person could not pull: \(failure)") }
        return try fresh.rows()
    }

    /// Where a device's rows differ from the server's, record by record and column by column (the
    /// columns the device's version has: one still on the first has no brand, which it keeps apart).
    private static func differences(_ rows: [String: Row], from server: [String: Row], on name: String) -> [String] {
        var problems: [String] = []
        for id in Set(rows.keys).union(server.keys).sorted() {
            switch (rows[id], server[id]) {
            case (let row?, nil): problems.append("\(name) holds \(id), which the server does not: \(row)")
            case (nil, let record?): problems.append("\(name) lacks \(id), which the server holds: \(record)")
            case (let row?, let record?) where row.columnNames.contains(where: { (row[$0] as DatabaseValue) != (record[$0] as DatabaseValue) }):
                let columns = row.columnNames.filter { (row[$0] as DatabaseValue) != (record[$0] as DatabaseValue) }
                problems.append("\(name) holds \(id) other than the server: "
                    + columns.map { "\($0) \(row[$0] as DatabaseValue) here, \(record[$0] as DatabaseValue) there" }.joined(separator: ", "))
            default: continue
            }
        }
        return problems
    }

    /// Every photo of what a device holds is its item's, and reads back byte for byte (unless its
    /// person gave up its refused upload: then it is not on the server, and that is said, never other bytes).
    private func photoProblems(of name: String, _ device: Device, holding expected: [Item], _ model: SoakIntent, shared: String)
        async throws -> [String] {
        var problems: [String] = []
        if try device.attachments.waiting() != (0, 0) { problems.append("\(name) has photos waiting: \(try device.attachments.waiting())") }
        for item in expected {
            let held = try await device.photo(of: item.id)
            guard let reference = model.photo(of: item.id) else {
                if let held { problems.append("\(name) holds photo \(held) on \(item.id), which has none") }
                continue
            }
            if held != reference { problems.append("\(name) holds photo \(String(describing: held)) on \(item.id), expected \(reference)") }
            let space = model.place(of: item.id) == .shared ? shared : nil
            let givenUp = model.abandonedUploads.contains(SoakIntent.upload(reference, in: space))
            // NB: read with the device's 400 ms deadline, which a machine busy with the whole
            // suite outlasts for seconds at a time: tried again, as the healing rounds are.
            let deadline = ContinuousClock.now + .seconds(60)
            while true {
                do {
                    if try await device.attachments.data(reference, space: space) != model.photos[reference] {
                        problems.append("\(name) reads other bytes for the photo of \(item.id)")
                    }
                    break
                } catch AttachmentError.notUploadedYet where givenUp {
                    break
                } catch let failure as RemoteFailure where ContinuousClock.now < deadline {
                    if case .rejected = failure { problems.append("\(name) cannot read the photo of \(item.id): \(failure)"); break }
                    try await Task.sleep(for: .milliseconds(100))
                } catch {
                    problems.append("\(name) cannot read the photo of \(item.id): \(error)")
                    break
                }
            }
        }
        return problems
    }
}

extension Device {
    /// Every row of the items table, every column, by id.
    func rows() throws -> [String: Row] {
        try store.reader.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT * FROM items").map { ($0["id"] as String, $0) })
        }
    }
}
