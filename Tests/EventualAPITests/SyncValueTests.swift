import Foundation
import Testing
import EventualAPI

@Suite("SyncValue: a synced field's value on the wire")
struct SyncValueTests {
    func roundTrip(_ value: SyncValue) throws -> SyncValue {
        try JSONDecoder().decode([SyncValue].self, from: JSONEncoder().encode([value]))[0]
    }

    @Test(arguments: [
        SyncValue.string("Milk"), .string(""), .string("true"), .string("12"), .string("null"), .string("emoji 🥛, \"quotes\", \n"),
        .integer(0), .integer(-1), .integer(.max), .integer(.min), .number(2.5), .number(-0.001), .number(1e300),
        .boolean(true), .boolean(false), .null,
    ])
    func everyValueRoundTripsThroughJSON(_ value: SyncValue) throws {
        #expect(try roundTrip(value) == value)
    }

    @Test func jsonNumbersDecodeAsIntegersWhenWholeAndInRange() throws {
        let values = try JSONDecoder().decode([SyncValue].self, from: Data("[3, -7, 2.5, 1e20, true, null, \"x\"]".utf8))
        #expect(values == [.integer(3), .integer(-7), .number(2.5), .number(1e20), .boolean(true), .null, .string("x")])
    }

    @Test func generatedContainerValuesMapBothWays() {
        #expect(SyncValue(any: nil) == .null)
        #expect(SyncValue(any: 3) == .integer(3))
        #expect(SyncValue(any: Int64(-4)) == .integer(-4))
        #expect(SyncValue(any: 3.0) == .integer(3), "a whole double is an integer")
        #expect(SyncValue(any: 3.5) == .number(3.5))
        #expect(SyncValue(any: 1e300) == .number(1e300), "beyond Int64 stays a number")
        #expect(SyncValue(any: true) == .boolean(true))
        #expect(SyncValue(any: "a") == .string("a"))
        for value: SyncValue in [.string("a"), .integer(3), .number(3.5), .boolean(false), .null] {
            #expect(SyncValue(any: value.anyValue) == value)
        }
    }

    @Test func accessorsAnswerOnlyForTheirKind() {
        #expect(SyncValue.integer(3).doubleValue == 3 && SyncValue.integer(3).int64Value == 3)
        #expect(SyncValue.number(2.0).int64Value == 2 && SyncValue.number(2.5).int64Value == nil)
        #expect(SyncValue.number(1e300).int64Value == nil)
        #expect(SyncValue.string("3").int64Value == nil && SyncValue.string("3").doubleValue == nil)
        #expect(SyncValue.boolean(true).boolValue == true && SyncValue.integer(1).boolValue == nil)
        #expect(SyncValue.null.isNull && !SyncValue.string("").isNull)
        #expect(SyncValue.string(nil as String?) == .null && SyncValue.integer(nil as Int64?) == .null && SyncValue.number(nil as Double?) == .null)
    }

    @Test func literalsMakeTheirKind() {
        let values: [SyncValue] = ["a", 1, 1.5, true, nil]
        #expect(values == [.string("a"), .integer(1), .number(1.5), .boolean(true), .null])
    }
}
