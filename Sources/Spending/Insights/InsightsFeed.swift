import EventualAPI
import EventualKit
import Foundation

/// One explained finding of the server about the person's spending (seed F4).
public struct Insight: Sendable, Equatable, Codable {
    /// `location`, `amount` or `category`.
    public let kind: String
    /// One sentence that names the numbers.
    public let message: String
    public let transactionId: String?
    public let category: String?
    /// Unix milliseconds of the transaction, or of the computation.
    public let at: Int64?
}

/// The findings and how old they are.
public struct InsightsResult: Sendable, Equatable {
    public let insights: [Insight]
    /// Unix milliseconds when the server computed them.
    public let computedAt: Int64
    /// False when the server could not be reached and the saved findings are shown.
    public let fresh: Bool
    /// Unix milliseconds when this device last had them from the server.
    public let fetchedAt: Int64
}

/// The server's findings, fetched when it can be reached and kept for offline use with their age.
public struct InsightsFeed: Sendable {
    static let cacheKey = "spending.insights"
    let cache: ReadCache
    let link: ServerLink
    let configuration: SpendingConfiguration

    struct Page: Codable, Sendable {
        let computedAt: Int64
        let insights: [Insight]
    }

    public func insights() async throws -> InsightsResult {
        let client = link.client
        // NB: with a copy to show, a silent server costs the local budget, not the read's 4 s.
        let hasCopy = (try? cache.peek(Self.cacheKey, as: Page.self)) != nil
        let timeout = hasCopy ? configuration.localCommandSyncBudget : configuration.networkReadTimeout
        do {
            let page = try await cache.read(Self.cacheKey, as: Page.self, policy: .networkFirst(timeout: timeout)) { _ in
                let answer: Operations.GetInsights.Output
                do { answer = try await client.getInsights() } catch { throw RemoteFailure.from(error) }
                switch answer {
                case .ok(let ok):
                    let list = try ok.body.json
                    let page = Page(computedAt: list.computedAt, insights: list.insights.map {
                        Insight(kind: $0.kind.rawValue, message: $0.message, transactionId: $0.transactionId, category: $0.category, at: $0.at)
                    })
                    return .fresh(try JSONEncoder().encode(page), etag: nil)
                case .unauthorized(let answer): throw try answer.body.json.remoteFailure
                case .forbidden(let answer): throw try answer.body.json.remoteFailure
                case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Loading insights")
                }
            }
            return InsightsResult(insights: page.value.insights, computedAt: page.value.computedAt, fresh: page.source == .network,
                                  fetchedAt: page.fetchedAt)
        } catch let error as CacheError {
            throw error.serverIsSilent ? SpendingError.notAnswering("insights") : SpendingError.insightsNeedConnection
        } catch let failure as RemoteFailure {
            throw SpendingError.server(failure.description)
        }
    }
}
