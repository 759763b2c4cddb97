import EventualAPI
import Testing
@testable import EventualServer

/// The numbers a push may carry are bounded twice, by the contract (`ContractGate`, which refuses
/// the push whole) and by `SyncChangeLimits` (which the engine checks before queueing a change):
/// the two must say the same range, or a change the engine queued could wedge its outbox.
@Suite("The contract bounds a change's numbers where the engine does")
struct PushLimitsTests {
    @Test func theContractsRangeOfAChangesValuesAndAmountsIsWhatARecordHolds() throws {
        let push = try #require(try ContractLimits.served().operations["syncPush"]?.jsonBody)
        let change = try #require(push.properties["changes"]?.items)
        let value = try #require(change.properties["fields"]?.everyProperty)
        let amount = try #require(change.properties["deltas"]?.additionalProperties)
        let largest = Double(SyncValue.largestMagnitude)
        for schema in [value, amount] {
            #expect(schema.maximum == largest && schema.minimum == -largest, "\(String(describing: schema.minimum)) \(String(describing: schema.maximum))")
            #expect(schema.exclusiveMaximum == nil && schema.exclusiveMinimum == nil)
        }
    }
}
