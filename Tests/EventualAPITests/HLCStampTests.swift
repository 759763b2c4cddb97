import Testing
import EventualAPI

@Suite("HLCStamp: the sync protocol's clock stamps")
struct HLCStampTests {
    @Test func aStampIsWrittenZeroPadded() {
        #expect(HLCStamp(millis: 1_764_000_000_000, counter: 7, node: "abc").description == "1764000000000-00007-abc")
        #expect(HLCStamp(millis: 5, counter: 0, node: "n").description == "0000000000005-00000-n")
        #expect(HLCStamp(millis: 9_999_999_999_999, counter: HLCStamp.maxCounter, node: "Z_9").description == "9999999999999-99999-Z_9")
    }

    @Test(arguments: ["1764000000000-00007-abc", "0000000000000-00000-a", "9999999999999-99999-" + String(repeating: "x", count: 64)])
    func aStampRoundTripsThroughItsText(_ text: String) throws {
        let stamp = try #require(HLCStamp(parsing: text))
        #expect(stamp.description == text)
    }

    @Test(arguments: [
        "", "1764000000000-00007", "1764000000000-00007-", "176400000000-00007-abc", "17640000000000-00007-abc",
        "1764000000000-0007-abc", "1764000000000-000007-abc", "176400000000a-00007-abc", "+764000000000-00007-abc",
        "1764000000000-00007-a-b", "1764000000000-00007-ab c", "1764000000000-00007-é",
        "1764000000000-00007-" + String(repeating: "x", count: 65),
    ])
    func malformedTextIsNoStamp(_ text: String) {
        #expect(HLCStamp(parsing: text) == nil)
    }

    @Test func stampsOrderByTimeThenCounterThenNodeAsTheirTextDoes() {
        let stamps = [
            HLCStamp(millis: 1, counter: 0, node: "b"), HLCStamp(millis: 1, counter: 1, node: "a"),
            HLCStamp(millis: 2, counter: 0, node: "a"), HLCStamp(millis: 1, counter: 0, node: "a"),
            HLCStamp(millis: 1_764_000_000_000, counter: 99_999, node: "a"), HLCStamp(millis: 1_764_000_000_001, counter: 0, node: "a"),
        ]
        #expect(stamps.sorted().map(\.description) == stamps.map(\.description).sorted())
        #expect(HLCStamp(millis: 1, counter: 0, node: "a") < HLCStamp(millis: 1, counter: 0, node: "b"))
    }
}
