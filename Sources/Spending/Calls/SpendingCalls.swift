import EventualAPI
import EventualKit
import Foundation

/// The body of a queued `spending.lastSeen`.
struct LastSeenCall: Codable, Sendable {
    let at: Int64
}

/// The body of a queued `spending.location`.
struct LocationCall: Codable, Sendable {
    let latitude: Double
    let longitude: Double
    let at: Int64
}

/// The body of a queued `spending.offerView`.
struct OfferViewCall: Codable, Sendable {
    let offerId: String
}

/// SpendiQ's queued calls, run by the sync engine when the server can be reached; each sends
/// its outbox entry's id as `Idempotency-Key`.
enum SpendingCalls {
    static let lastSeen = "spending.lastSeen"
    static let location = "spending.location"
    static let offerView = "spending.offerView"

    static var handlers: [String: CallHandler] {
        [lastSeen: runLastSeen, location: runLocation, offerView: runOfferView]
    }

    @Sendable static func runLastSeen(_ context: CallContext) async throws {
        let call = try context.decode(LastSeenCall.self)
        switch try await context.client.postLastSeen(headers: .init(idempotencyKey: context.idempotencyKey), body: .json(.init(at: call.at))) {
        case .noContent: return
        case .badRequest(let answer): throw try answer.body.json.remoteFailure
        case .unauthorized(let answer): throw try answer.body.json.remoteFailure
        case .forbidden(let answer): throw try answer.body.json.remoteFailure
        case .contentTooLarge(let answer): throw try answer.body.json.remoteFailure
        case .unsupportedMediaType(let answer): throw try answer.body.json.remoteFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Recording the last visit")
        }
    }

    @Sendable static func runLocation(_ context: CallContext) async throws {
        let call = try context.decode(LocationCall.self)
        switch try await context.client.postLocation(headers: .init(idempotencyKey: context.idempotencyKey),
                                                     body: .json(.init(latitude: call.latitude, longitude: call.longitude, at: call.at))) {
        case .noContent: return
        case .badRequest(let answer): throw try answer.body.json.remoteFailure
        case .unauthorized(let answer): throw try answer.body.json.remoteFailure
        case .forbidden(let answer): throw try answer.body.json.remoteFailure
        case .contentTooLarge(let answer): throw try answer.body.json.remoteFailure
        case .unsupportedMediaType(let answer): throw try answer.body.json.remoteFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Sending the position")
        }
    }

    @Sendable static func runOfferView(_ context: CallContext) async throws {
        let call = try context.decode(OfferViewCall.self)
        switch try await context.client.postOfferView(path: .init(id: call.offerId), headers: .init(idempotencyKey: context.idempotencyKey)) {
        case .noContent: return
        case .badRequest(let answer): throw try answer.body.json.remoteFailure
        case .unauthorized(let answer): throw try answer.body.json.remoteFailure
        case .forbidden(let answer): throw try answer.body.json.remoteFailure
        // NB: an offer that ended meanwhile: the view no longer matters; nothing to retry.
        case .notFound: return
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Counting the view")
        }
    }
}

extension SyncReport {
    /// The calls of a round that every start makes for itself (the last visit, the position), not
    /// something the person did: a sync's summary does not count them.
    public var visitsRecorded: Int {
        (callsByOperation[SpendingCalls.lastSeen] ?? 0) + (callsByOperation[SpendingCalls.location] ?? 0)
    }
}
