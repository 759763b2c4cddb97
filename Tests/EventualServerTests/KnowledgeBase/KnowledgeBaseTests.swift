import Foundation
import Testing
@testable import EventualServer

@Suite("Knowledge base: look-ups, products, votes", .timeLimit(.minutes(2)))
struct KnowledgeBaseTests {
    @Test(arguments: Backend.available)
    func lookupOfAnUnknownBarcodeIsEmptyWithASessionToken(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let answer = try await api.lookup(Barcodes.unique(), as: account)
            #expect(answer.status == .ok)
            let list = try answer.decode(ProductListJSON.self)
            #expect(list.products.isEmpty)
            #expect(list.token.count > 40)
        }
    }

    @Test(arguments: Backend.available)
    func lookupRejectsAMissingOrInvalidBarcode(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let cases: [(uri: String, mentions: String)] = [
                ("/products", "barcode"),
                ("/products?barcode=", "barcode"),
                ("/products?barcode=12345abc9012", "digits"),
                ("/products?barcode=1234567", "8 (EAN-8)"),
                ("/products?barcode=\(Barcodes.withWrongCheckDigit(Barcodes.unique()))", "check digit"),
            ]
            for invalid in cases {
                let answer = try await api.send(.get, invalid.uri, headers: account.bearer)
                #expect(answer.status == .badRequest, "\(invalid.uri)")
                #expect(try answer.error().message.contains(invalid.mentions), "\(invalid.uri): \(answer.text)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func lookupNeedsAnAccessToken(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let answer = try await api.send(.get, "/products?barcode=\(Barcodes.unique())")
            #expect(answer.status == .unauthorized)
            _ = try answer.error()
        }
    }

    @Test(arguments: Backend.available)
    func postedProductIsFoundByItsBarcode(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            // When
            let answer = try await api.postProduct(barcode, name: "  Oat drink  ", token: token, as: account, description: "1 litre")
            // Then
            #expect(answer.status == .created)
            let product = try answer.decode(ProductJSON.self)
            #expect(product.name == "Oat drink")
            #expect(product.description == "1 litre")
            #expect(product.barcode == barcode)
            #expect(product.userId == account.id)
            #expect(product.test == false)
            let found = try await api.products(barcode, as: account)
            #expect(found.map(\.id) == [product.id])
            #expect(found.first?.score == 0)
        }
    }

    @Test(arguments: Backend.available)
    func sessionTokenCanBeReusedForSeveralPosts(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            #expect(try await api.postProduct(barcode, name: "First", token: token, as: account).status == .created)
            #expect(try await api.postProduct(barcode, name: "Second", token: token, as: account).status == .created)
            #expect(try await api.products(barcode, as: account).count == 2)
        }
    }

    @Test(arguments: Backend.available, ["true", #""true""#, #""TRUE""#])
    func testProductIsAnsweredButNeverStored(_ backend: Backend, flag: String) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            let answer = try await api.postProduct(barcode, name: "Ghost", token: token, as: account, test: flag)
            #expect(answer.status == .created)
            let product = try answer.decode(ProductJSON.self)
            #expect(product.test == true)
            #expect(product.name == "Ghost")
            #expect(try await api.products(barcode, as: account).isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func upcAAndTheSameCodeAsEAN13AreOneProduct(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let product = try await api.createProduct(Barcodes.upcA, name: "Soft drink", as: account)
            let viaEAN13 = try await api.products(Barcodes.upcAAsEAN13, as: account)
            #expect(viaEAN13.map(\.id) == [product.id])
            // And a session token for one form is good for the other.
            let token = try await api.sessionToken(Barcodes.upcAAsEAN13, as: account)
            #expect(try await api.postProduct(Barcodes.upcA, name: "Same", token: token, as: account).status == .created)
        }
    }

    @Test(arguments: Backend.available)
    func postProductRejectsEachInvalidField(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            let blank = try await api.postProduct(barcode, name: "   ", token: token, as: account)
            let long = try await api.postProduct(barcode, name: String(repeating: "n", count: 201), token: token, as: account)
            let longDescription = try await api.postProduct(barcode, name: "ok", token: token, as: account,
                                                            description: String(repeating: "d", count: 2001))
            let badBarcode = try await api.postProduct(Barcodes.withWrongCheckDigit(barcode), name: "ok", token: token, as: account)
            let badFlag = try await api.postProduct(barcode, name: "ok", token: token, as: account, test: #""maybe""#)
            let missingName = try await api.send(.post, "/products", headers: account.bearer,
                                                 json: #"{"token":"\#(token)","barcode":"\#(barcode)","test":false}"#)
            for (answer, mentions) in [(blank, "name"), (long, "name"), (longDescription, "description"),
                                       (badBarcode, "check digit"), (badFlag, "test"), (missingName, "name")] {
                #expect(answer.status == .badRequest, "\(answer.text)")
                #expect(try answer.error().message.contains(mentions), "\(answer.text)")
            }
            #expect(try await api.products(barcode, as: account).isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func postProductRefusesABadSessionToken(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice")
            let bob = try await api.signUp("bob")
            let barcode = Barcodes.unique()
            let alicesToken = try await api.sessionToken(barcode, as: alice)
            let otherBarcodeToken = try await api.sessionToken(Barcodes.unique(), as: alice)
            let tampered = String(alicesToken.dropLast(2)) + (alicesToken.hasSuffix("AA") ? "BB" : "AA")
            let cases: [(token: String, account: Account, mentions: String)] = [
                ("unknown-token", alice, "invalid"),
                (tampered, alice, "invalid"),
                (alicesToken, bob, "another user"),
                (otherBarcodeToken, alice, "another barcode"),
            ]
            for refused in cases {
                let answer = try await api.postProduct(barcode, name: "Nope", token: refused.token, as: refused.account)
                #expect(answer.status == .forbidden, "\(refused.mentions): \(answer.text)")
                #expect(try answer.error().message.contains(refused.mentions), "\(answer.text)")
            }
            #expect(try await api.products(barcode, as: alice).isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func postProductNeedsAnAccessToken(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let answer = try await api.send(.post, "/products",
                                            json: #"{"token":"t","name":"n","barcode":"\#(Barcodes.unique())","test":false}"#)
            #expect(answer.status == .unauthorized)
        }
    }

    @Test(arguments: Backend.available)
    func replayedProductPostWithTheSameKeyCreatesOneProduct(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            let first = try await api.postProduct(barcode, name: "Muesli", token: token, as: account, key: "op-1")
            let replay = try await api.postProduct(barcode, name: "Muesli", token: token, as: account, key: "op-1")
            #expect(first.status == .created)
            #expect(replay.status == .created)
            #expect(try replay.decode(ProductJSON.self) == first.decode(ProductJSON.self))
            #expect(try await api.products(barcode, as: account).count == 1)
            // The key belongs to its caller: another user's identical key is another operation.
            let other = try await api.signUp()
            let otherToken = try await api.sessionToken(barcode, as: other)
            #expect(try await api.postProduct(barcode, name: "Muesli", token: otherToken, as: other, key: "op-1").status == .created)
            #expect(try await api.products(barcode, as: account).count == 2)
        }
    }

    @Test(arguments: Backend.available)
    func aRetryWithAFreshSessionTokenIsStillAReplay(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given a post whose answer was lost
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let first = try await api.postProduct(barcode, name: "Granola", token: try await api.sessionToken(barcode, as: account),
                                                  as: account, key: "retry-1")
            #expect(first.status == .created)
            // When the client looks the barcode up again (a new session token) and retries with the same key
            try await Task.sleep(for: .milliseconds(2))
            let retry = try await api.postProduct(barcode, name: "Granola", token: try await api.sessionToken(barcode, as: account),
                                                  as: account, key: "retry-1")
            // Then it gets the first answer and nothing new is created
            #expect(retry.status == .created)
            #expect(try retry.decode(ProductJSON.self) == first.decode(ProductJSON.self))
            #expect(try await api.products(barcode, as: account).count == 1)
            // But the same key for another product is refused
            let other = try await api.postProduct(barcode, name: "Muesli", token: try await api.sessionToken(barcode, as: account),
                                                  as: account, key: "retry-1")
            #expect(other.status == .unprocessableContent)
        }
    }

    @Test(arguments: Backend.available)
    func concurrentPostsWithOneKeyCreateOneProduct(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await api.postProduct(barcode, name: "Race", token: token, as: account, key: "race-1") }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.status == .created }, "\(answers.map(\.text))")
            #expect(Set(try answers.map { try $0.decode(ProductJSON.self).id }).count == 1)
            #expect(try await api.products(barcode, as: account).count == 1)
        }
    }

    @Test(arguments: Backend.available)
    func productsAreOrderedByTheSumOfTheirVotes(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given three products for one barcode
            let barcode = Barcodes.unique()
            let creator = try await api.signUp()
            let first = try await api.createProduct(barcode, name: "First", as: creator)
            let second = try await api.createProduct(barcode, name: "Second", as: creator)
            let third = try await api.createProduct(barcode, name: "Third", as: creator)
            // When two users vote
            let voter1 = try await api.signUp(), voter2 = try await api.signUp()
            let token1 = try await api.sessionToken(barcode, as: voter1)
            let token2 = try await api.sessionToken(barcode, as: voter2)
            #expect(try await api.vote(third.id, rating: "5", token: token1, as: voter1).status == .created)
            #expect(try await api.vote(third.id, rating: "-1", token: token2, as: voter2).status == .created)
            #expect(try await api.vote(first.id, rating: "-3", token: token1, as: voter1).status == .created)
            // Then the look-up lists them best first, with their scores
            let products = try await api.products(barcode, as: creator)
            #expect(products.map(\.id) == [third.id, second.id, first.id])
            #expect(products.map(\.score) == [4, 0, -3])
        }
    }

    @Test(arguments: Backend.available)
    func votingAgainReplacesTheEarlierRating(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let product = try await api.createProduct(barcode, name: "Tea", as: account)
            let token = try await api.sessionToken(barcode, as: account)
            let first = try await api.vote(product.id, rating: "5", token: token, as: account)
            let second = try await api.vote(product.id, rating: "-2", token: token, as: account)
            #expect(first.status == .created)
            #expect(second.status == .created)
            let vote = try second.decode(VoteJSON.self)
            #expect(vote.id == (try first.decode(VoteJSON.self)).id)
            #expect(vote.rating == -2)
            #expect(vote.userId == account.id)
            #expect(vote.productId == product.id)
            #expect(try await api.products(barcode, as: account).first?.score == -2)
        }
    }

    @Test(arguments: Backend.available)
    func voteRejectsARatingOutsideMinusFiveToFive(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let product = try await api.createProduct(barcode, name: "Tea", as: account)
            let token = try await api.sessionToken(barcode, as: account)
            for rating in ["6", "-6", "2.5", #""3""#, "null"] {
                let answer = try await api.vote(product.id, rating: rating, token: token, as: account)
                #expect(answer.status == .badRequest, "rating \(rating): \(answer.text)")
                _ = try answer.error()
            }
            #expect(try await api.products(barcode, as: account).first?.score == 0)
        }
    }

    @Test(arguments: Backend.available)
    func voteRefusesABadTokenOrAProductOfAnotherBarcode(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique(), otherBarcode = Barcodes.unique()
            let product = try await api.createProduct(barcode, name: "Tea", as: account)
            let otherToken = try await api.sessionToken(otherBarcode, as: account)
            let garbage = try await api.vote(product.id, rating: "1", token: "garbage", as: account)
            let wrongBarcode = try await api.vote(product.id, rating: "1", token: otherToken, as: account)
            #expect(garbage.status == .forbidden)
            #expect(wrongBarcode.status == .forbidden)
            #expect(try wrongBarcode.error().message.contains("another barcode"))
            #expect(try await api.products(barcode, as: account).first?.score == 0)
        }
    }

    @Test(arguments: Backend.available)
    func voteForAnUnknownProductIsNotFound(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let token = try await api.sessionToken(Barcodes.unique(), as: account)
            let answer = try await api.vote(UUID().uuidString.lowercased(), rating: "1", token: token, as: account)
            #expect(answer.status == .notFound)
            _ = try answer.error()
        }
    }

    @Test(arguments: Backend.available)
    func creatorDeletesAProductAndItsVotes(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let product = try await api.createProduct(barcode, name: "Bread", as: account)
            let token = try await api.sessionToken(barcode, as: account)
            #expect(try await api.vote(product.id, rating: "3", token: token, as: account).status == .created)
            let answer = try await api.send(.delete, "/products/\(product.id)", headers: account.bearer)
            #expect(answer.status == .ok)
            #expect(try answer.decode(ProductJSON.self).id == product.id)
            #expect(try await api.products(barcode, as: account).isEmpty)
            #expect(try await api.send(.delete, "/products/\(product.id)", headers: account.bearer).status == .notFound)
        }
    }

    @Test(arguments: Backend.available)
    func onlyTheCreatorMayDeleteAProduct(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let creator = try await api.signUp(), other = try await api.signUp()
            let barcode = Barcodes.unique()
            let product = try await api.createProduct(barcode, name: "Bread", as: creator)
            let answer = try await api.send(.delete, "/products/\(product.id)", headers: other.bearer)
            #expect(answer.status == .forbidden)
            _ = try answer.error()
            #expect(try await api.products(barcode, as: creator).map(\.id) == [product.id])
            #expect(try await api.send(.delete, "/products/\(product.id)").status == .unauthorized)
        }
    }
}
