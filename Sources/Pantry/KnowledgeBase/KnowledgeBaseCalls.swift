import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The body of a queued `kb.postProduct`.
struct PostProductCall: Codable, Sendable {
    let localId: String
    let barcode: String
    let name: String
    let description: String?
}

/// The body of a queued `kb.vote`.
struct VoteCall: Codable, Sendable {
    let barcode: String
    let productId: String
    let rating: Int
}

/// The queued knowledge-base calls the sync engine runs once the network is back. Each first
/// looks the barcode up for a session token, then posts; the outbox entry's id is the
/// `Idempotency-Key`, so a replay after a lost answer creates nothing.
enum KnowledgeBaseCalls {
    static let postProduct = "kb.postProduct"
    static let vote = "kb.vote"

    static var handlers: [String: CallHandler] {
        [postProduct: runPostProduct, vote: runVote]
    }

    static func products(_ barcode: String, client: Client) async throws -> Components.Schemas.ProductList {
        switch try await client.getProducts(query: .init(barcode: barcode)) {
        case .ok(let answer): return try answer.body.json
        case .badRequest(let answer): throw try answer.body.json.remoteFailure
        case .unauthorized(let answer): throw try answer.body.json.remoteFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "The look-up")
        }
    }

    @Sendable static func runPostProduct(_ context: CallContext) async throws {
        let call = try context.decode(PostProductCall.self)
        let token = try await products(call.barcode, client: context.client).token
        let product: Components.Schemas.Product
        switch try await context.client.postProduct(
            headers: .init(idempotencyKey: context.idempotencyKey),
            body: .json(.init(token: token, name: call.name, description: call.description, barcode: call.barcode, test: .case1(false)))
        ) {
        case .created(let answer): product = try answer.body.json
        case .badRequest(let answer): throw try answer.body.json.remoteFailure
        case .unauthorized(let answer): throw try answer.body.json.remoteFailure
        case .forbidden(let answer): throw try answer.body.json.remoteFailure
        case .unprocessableContent(let answer): throw try answer.body.json.remoteFailure
        case .contentTooLarge(let answer): throw try answer.body.json.remoteFailure
        case .unsupportedMediaType(let answer): throw try answer.body.json.remoteFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Posting \(call.name)")
        }
        try await context.store.write { tx in
            try tx.db.execute(sql: "UPDATE kb_my_products SET serverId = ? WHERE localId = ?", arguments: [product.id, call.localId])
        }
    }

    @Sendable static func runVote(_ context: CallContext) async throws {
        let call = try context.decode(VoteCall.self)
        let token = try await products(call.barcode, client: context.client).token
        switch try await context.client.postVote(body: .json(.init(token: token, rating: call.rating, productId: call.productId))) {
        case .created: return
        case .badRequest(let answer): throw try answer.body.json.remoteFailure
        case .unauthorized(let answer): throw try answer.body.json.remoteFailure
        case .forbidden(let answer): throw try answer.body.json.remoteFailure
        case .notFound(let answer): throw try answer.body.json.remoteFailure
        case .contentTooLarge(let answer): throw try answer.body.json.remoteFailure
        case .unsupportedMediaType(let answer): throw try answer.body.json.remoteFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "The vote")
        }
    }
}
