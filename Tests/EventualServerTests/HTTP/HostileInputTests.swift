import Foundation
import Testing
@testable import EventualServer

@Suite("NUL and control characters are refused with a 400 naming the field, never truncated", .timeLimit(.minutes(2)))
struct HostileInputTests {
    @Test(arguments: Backend.available)
    func nulInASyncChangeIDIsA400AndTheOutboxIsNotStuck(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given a batch whose second change id holds a NUL
            let account = try await api.signUp()
            let good = SyncChangeJSON(recordId: "item-1", hlc: Stamps.at(-1000), fields: pantryItem())
            let bad = SyncChangeJSON(id: "change\u{0}tail", recordId: "item-2", hlc: Stamps.at(-1000), fields: pantryItem())
            // When it is pushed, twice
            for _ in 0..<2 {
                let answer = try await api.push([good, bad], as: account)
                // Then it is a 400 naming the field, not a 500
                #expect(answer.status == .badRequest, "\(answer.text)")
                #expect(try answer.error().message.contains("changes[1].id"))
                #expect(try answer.error().message.contains("NUL"))
            }
            // And once the device fixes the id, the batch goes through
            var fixed = bad
            fixed.id = "change-tail"
            #expect(try await api.pushed([good, fixed], as: account).map(\.status) == ["applied", "applied"])
        }
    }

    @Test(arguments: Backend.available)
    func nulOrControlCharactersInSyncIdsAndValuesAreRefused(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let cases: [(SyncChangeJSON, String)] = [
                (SyncChangeJSON(recordId: "item\u{0}", hlc: Stamps.at(-1000), fields: pantryItem()), "changes[0].recordId"),
                (SyncChangeJSON(recordId: "item\u{7}", hlc: Stamps.at(-1000), fields: pantryItem()), "changes[0].recordId"),
                (SyncChangeJSON(recordId: "item", hlc: Stamps.at(-1000), fields: pantryItem(["name": "Oat\u{0}milk"])), "changes[0].fields.name"),
                (SyncChangeJSON(collection: "pantry\u{0}items", recordId: "item", hlc: Stamps.at(-1000), fields: pantryItem()), "changes[0].collection"),
            ]
            for (change, field) in cases {
                let answer = try await api.push([change], as: account)
                #expect(answer.status == .badRequest, "\(field): \(answer.text)")
                #expect(try answer.error().message.contains(field), "\(answer.text)")
            }
            // A line break in a value is text, and is kept whole
            let note = SyncChangeJSON(recordId: "note", hlc: Stamps.at(-1000), fields: pantryItem(["name": "Oat\nmilk"]))
            #expect(try await api.pushed([note], as: account).map(\.status) == ["applied"])
            #expect(try await api.pulledRecords(as: account)["note"]?.fields["name"] == "Oat\nmilk")
        }
    }

    @Test(arguments: Backend.available)
    func aPasswordOfNULsIsRefusedAndAnEmptyPasswordNeverSignsIn(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // When someone registers with a password of NULs
            let nuls = String(repeating: "\\u0000", count: 8)
            let registered = try await api.send(.post, "/users", json: #"{"username":"nul_user","email":"nul@example.com","password":"\#(nuls)"}"#)
            // Then it is refused, naming the password
            #expect(registered.status == .badRequest, "\(registered.text)")
            #expect(try registered.error().message.contains("password"))
            // And "" does not sign anyone in
            #expect(try await api.login(email: "nul@example.com", password: "").status == .unauthorized)
            // And a login with a NUL in the password is a 400, not a silent truncation
            let account = try await api.signUp()
            let truncated = try await api.send(.post, "/auth/login",
                                               json: #"{"email":"\#(account.email)","password":"\#(account.password)\u0000anything"}"#)
            #expect(truncated.status == .badRequest, "\(truncated.text)")
            #expect(try truncated.error().message.contains("password"))
        }
    }

    @Test(arguments: Backend.available)
    func nulInProductFieldsAndIdsIsA400(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            let name = try await api.postProduct(barcode, name: "Milk\u{0}Evil", token: token, as: account)
            #expect(name.status == .badRequest)
            #expect(try name.error().message.contains("name"))
            let description = try await api.postProduct(barcode, name: "Milk", token: token, as: account, description: "a\u{0}b")
            #expect(description.status == .badRequest)
            #expect(try description.error().message.contains("description"))
            let vote = try await api.vote("id\\u0000", rating: "1", token: token, as: account)
            #expect(vote.status == .badRequest)
            #expect(try vote.error().message.contains("productId"))
            let delete = try await api.send(.delete, "/products/abc%00def", headers: account.bearer)
            #expect([.badRequest, .notFound].contains(delete.status), "\(delete.text)")
            let login = try await api.login(email: "a\\u0000@example.com", password: "whatever1")
            #expect(login.status == .badRequest, "\(login.text)")
            #expect(try login.error().message.contains("email"))
            // And nothing was stored
            #expect(try await api.products(barcode, as: account).isEmpty)
        }
    }
}
