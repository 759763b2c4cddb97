import Testing
@testable import EventualAPI

/// What a change may carry, as the server reads a push and the engine checks a change before
/// queueing it: one rule, one wording.
@Suite("What a pushed change may carry")
struct SyncChangeLimitsTests {
    private static let items = SyncCollections.pantryItems

    private static func problem(recordID: String = "item-1", space: String? = nil, _ fields: [String: SyncValue] = [:],
                                deltas: [String: Double] = [:]) -> String? {
        SyncChangeLimits.problem(inChangeOf: items, recordID: recordID, space: space, fields: fields, deltas: deltas)?.description
    }

    @Test func aChangeOfOrdinaryValuesHasNoProblem() {
        #expect(Self.problem(["name": "Oat milk", "description": "Two lines\n\tand a tab", "quantity": .number(-2.5),
                              "boughtAt": .integer(SyncValue.largestMagnitude), "expiresOn": .null], deltas: ["quantity": -1]) == nil)
    }

    @Test func aControlCharacterInATextValueIsNamedWithItsField() {
        #expect(Self.problem(["name": "Oat\u{0}milk"]) == "name of a pantry_items record must not contain a NUL byte")
        #expect(Self.problem(["description": "bell\u{7}"]) == "description of a pantry_items record must not contain the control character U+0007")
        #expect(Self.problem(["description": "next\u{85}line"]) == "description of a pantry_items record must not contain a line break")
    }

    @Test func anIdMayHoldNoControlCharacterAndASpaceIdMustBeOfTheLengthsAllowed() {
        #expect(Self.problem(recordID: "item\t1") == "the record id of a pantry_items record must not contain a tab")
        #expect(Self.problem(space: String(repeating: "s", count: 129)) == "the space id of a pantry_items record must be 1 to 128 characters long")
        #expect(Self.problem(space: "home\u{1B}") == "the space id of a pantry_items record must not contain an escape character")
    }

    @Test func aNumberNoRecordHoldsIsRefusedInAValueAndInAnAmountAdded() {
        for number in [Double.infinity, -.infinity, .nan, 1e300, Double(SyncValue.largestMagnitude) + 2] {
            #expect(Self.problem(["quantity": .number(number)])?.hasPrefix("quantity of a pantry_items record must be a finite number") == true,
                    "\(number)")
            #expect(Self.problem(deltas: ["quantity": number])?.hasPrefix("the amount added to quantity of a pantry_items record") == true,
                    "\(number)")
        }
        #expect(Self.problem(["boughtAt": .integer(.max)]) != nil)
        #expect(Self.problem(["boughtAt": .integer(-SyncValue.largestMagnitude)]) == nil)
    }

    @Test func whatTheServerRejectsForTheChangeAloneIsNoProblemOfThePush() {
        // NB: the server rejects these for the change alone, in its own words: they fail, to be settled
        #expect(Self.problem(["name": .string(String(repeating: "n", count: 201))]) == nil)
        #expect(Self.problem(recordID: "") == nil && Self.problem(recordID: String(repeating: "é", count: 129)) == nil)
        // And the server says them with these words
        #expect(SyncChangeLimits.problem(withText: String(repeating: "n", count: 201), of: SyncField(.string, maxLength: 200))
            == "must be at most 200 characters long, not 201")
        #expect(SyncChangeLimits.problem(withRecordIDLength: "") == "must be 1 to 128 characters long, not 0")
        #expect(SyncChangeLimits.problem(withRecordIDLength: String(repeating: "é", count: 128)) == nil)
    }

    @Test func textRulesNameTheCharacterAsControlCharactersDo() {
        #expect(TextRules.problem(in: "a\tb", .singleLine) == "a tab")
        #expect(TextRules.problem(in: "a\tb\r\n", .multiLine) == nil)
        #expect(TextRules.problem(in: "a\u{0}", .multiLine) == "a NUL byte")
        #expect(TextRules.problem(in: "\u{7}\t", .anythingButNUL) == nil)
        #expect(TextRules.problem(in: "pass\u{0}", .anythingButNUL) == "a NUL byte")
        // NB: C1 controls are control characters too, and the DEL
        #expect(TextRules.problem(in: "\u{9F}", .multiLine) == "the control character U+009F")
        #expect(TextRules.problem(in: "\u{7F}", .multiLine) == "the control character U+007F")
    }
}
