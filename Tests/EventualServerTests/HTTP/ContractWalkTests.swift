import Foundation
import Testing
@testable import EventualServer

/// The contract's gate reads a body's numbers in one walk over its bytes (`ContractWalk`), not
/// by decoding the body a second time. The property: for every body, the walk refuses exactly
/// what the decoded body's check (`ContractCheck` over `JSONValue`) refuses, with the same
/// words when one number is out; and no byte sequence traps it.
@Suite("The contract's gate walks a body once and judges it as the decoded body was")
struct ContractWalkTests {
    /// What the gate answered before the walk: the body decoded whole, then checked.
    static func decodedAnswer(_ json: String, _ schema: ContractLimits.Schema) -> String? {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)) else { return nil }
        return ContractCheck.problem(with: value, against: schema, at: "")
    }

    static func walkAnswer(_ json: String, _ schema: ContractLimits.Schema) -> String? {
        ContractWalk.problem(in: Data(json.utf8), against: schema)
    }

    @Test func everyExtremeOfEveryBodyGetsTheWordsTheDecodedBodyGot() throws {
        let contract = try ContractLimits.served()
        var compared = 0, refused = 0
        for operation in contract.operations.values.sorted(by: { $0.id < $1.id }) {
            guard let schema = operation.jsonBody else { continue }
            for field in NumericField.all(in: operation) {
                for value in field.extremes {
                    // Given a body whose one number is an extreme, the rest plain
                    guard let json = field.request(with: value, signedIn: [:]).json else { continue }
                    // Then the walk answers it word for word as the decoded body's check did
                    let decoded = Self.decodedAnswer(json, schema), walked = Self.walkAnswer(json, schema)
                    #expect(walked == decoded, "\(operation.id) \(field.name)=\(value.text): walked \(walked ?? "-"), decoded \(decoded ?? "-")")
                    compared += 1
                    if decoded != nil { refused += 1 }
                }
            }
        }
        #expect(compared >= 100 && refused > 50, "compared \(compared), refused \(refused)")
    }

    @Test func aKeySpelledWithEscapesIsTheKeyItSpells() throws {
        let push = try #require(try ContractLimits.served().operations["syncPush"]?.jsonBody)
        // Given a change whose delta's key is written with escapes ("deltas", "quantity")
        let json = #"{"changes":[{"changeId":"c1","collection":"pantry_items","recordId":"r1","hlc":"1","\u0064eltas":{"q\u0075antity":1e300}}]}"#
        // Then the walk holds the number to the range of the key it spells
        let walked = try #require(Self.walkAnswer(json, push))
        #expect(walked == Self.decodedAnswer(json, push))
        #expect(walked.contains("changes[0].deltas.quantity"), "\(walked)")
    }

    @Test func randomBodiesAreRefusedExactlyWhenTheDecodedBodyWas() throws {
        let contract = try ContractLimits.served()
        let schemas = contract.operations.values.compactMap(\.jsonBody).filter(\.boundsNumbers)
        #expect(schemas.count >= 5)
        var random = SplitMix(seed: 51), refused = 0
        for round in 0..<3_000 {
            // Given a random body of a random operation's shape: numbers from in range to 1e308,
            // texts with escapes, keys unknown, spaces between the tokens
            let schema = schemas[Int(random.next() % UInt64(schemas.count))]
            var maker = BodyMaker(random: random)
            let json = maker.body(of: schema)
            random = SplitMix(seed: random.next())
            // Then the walk refuses it exactly when the decoded body's check did
            let decoded = Self.decodedAnswer(json, schema), walked = Self.walkAnswer(json, schema)
            #expect((walked == nil) == (decoded == nil), "round \(round): \(json.prefix(400)) walked \(walked ?? "-"), decoded \(decoded ?? "-")")
            if decoded != nil { refused += 1 }
        }
        #expect(refused > 300, "refused \(refused) of 3000: the bodies do not reach the ranges")
    }

    @Test func noBytesTrapTheWalk() throws {
        let push = try #require(try ContractLimits.served().operations["syncPush"]?.jsonBody)
        let valid = #"{"changes":[{"changeId":"c\"1\\","collection":"pantry_items","recordId":"r1","hlc":"1","deltas":{"quantity":-2.5e3},"fields":{"name":"\ud83d\ude00 \u00e9"}}]}"#
        // Every cut of a body reads as nothing to refuse: the decoder says what is wrong with it
        let bytes = Array(valid.utf8)
        for end in 0..<bytes.count {
            #expect(ContractWalk.problem(in: Data(bytes[0..<end]), against: push) == nil, "cut at \(end)")
        }
        // Odd bytes, lone surrogates, NUL, a byte order mark, a number with no digits
        let odd = ["\u{0}", "{\"changes\":[\u{0}]}", #"{"changes":"\ud800"}"#, #"{"\ud800x":1}"#, "\u{FEFF}{\"changes\":[]}",
                   "-", "{\"changes\":[{\"deltas\":{\"quantity\":-}}]}", "1e99999", "[\"\\", "{\"a\":tru}", "nul", "\"\\u12\""]
        for text in odd { _ = ContractWalk.problem(in: Data(text.utf8), against: push) }
        var random = SplitMix(seed: 7)
        for _ in 0..<2_000 {
            let count = Int(random.next() % 64)
            let noise = (0..<count).map { _ in [UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: ":"),
                                                UInt8(ascii: ","), UInt8(ascii: "1"), UInt8(ascii: "e"), UInt8(ascii: "-"), 0x00, 0xFF,
                                                UInt8(ascii: "}"), UInt8(ascii: "]")][Int(random.next() % 13)] }
            _ = ContractWalk.problem(in: Data(noise), against: push)
        }
        // And nesting past the walk's depth is refused, not a stack overflow
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let nested = try #require(ContractWalk.problem(in: Data(("{\"changes\":" + deep + "}").utf8), against: push))
        #expect(nested.contains("deep"), "\(nested)")
        // And a body of numbers at their ends is read with each number whole
        #expect(ContractWalk.problem(in: Data(valid.utf8), against: push) == nil)
    }
}

/// SplitMix64, so that a failing round replays by its seed.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random JSON in a schema's shape, with the numbers, texts and spacing that are hard to read.
private struct BodyMaker {
    var random: SplitMix

    static let numbers = ["0", "-0", "1", "-1", "0.5", "1e2", "1E+2", "-2.5e-3", "9007199254740991", "9007199254740992", "-9007199254740992",
                          "9223372036854775807", "-9223372036854775808", "18446744073709551616", "1e308", "-1e308", "1.0", "20971520",
                          "20971521", "100", "101", "500", "501", "3650", "64", "65", "1000000"]
    static let texts = [#""x""#, #""""#, #""a\"b""#, #""\\""#, #""\u00e9\ud83d\ude00""#, #""é""#, #""\/\b\f\n\r\t""#, #""1e308""#]
    static let spaces = ["", " ", "\n", "\t", "\r\n "]

    init(random: SplitMix) {
        self.random = random
    }

    mutating func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }

    mutating func body(of schema: ContractLimits.Schema) -> String {
        value(of: schema, depth: 0)
    }

    private mutating func value(of schema: ContractLimits.Schema?, depth: Int) -> String {
        let space = pick(Self.spaces)
        // NB: now and then a value of the wrong type: the decoder refuses it, and the check passes it on.
        guard let schema, depth < 6, random.next() % 12 != 0 else { return space + scalar() }
        if schema.isNumeric { return space + pick(Self.numbers) }
        if schema.types.contains("array") || schema.items != nil {
            let count = Int(random.next() % 4)
            return space + "[" + (0..<count).map { _ in value(of: schema.items, depth: depth + 1) }.joined(separator: ",") + space + "]"
        }
        if schema.types.contains("object") || !schema.properties.isEmpty || schema.additionalProperties != nil {
            // NB: no key twice: which of two a decoder keeps is its own choice (the walk holds both).
            var members: [String] = [], keys: Set<String> = []
            for (key, inner) in schema.properties.sorted(by: { $0.key < $1.key }) where random.next() % 4 != 0 {
                keys.insert(key)
                members.append(quoted(key) + ":" + value(of: inner, depth: depth + 1))
            }
            for _ in 0..<Int(random.next() % 3) {
                let key = pick(["k", "extra", "quantity", "é", "a b"])
                guard keys.insert(key).inserted else { continue }
                members.append(quoted(key) + ":" + value(of: schema.additionalProperties ?? schema.everyProperty, depth: depth + 1))
            }
            return space + "{" + members.shuffled(using: &random).joined(separator: "," + pick(Self.spaces)) + space + "}"
        }
        return space + scalar()
    }

    private mutating func scalar() -> String {
        pick([pick(Self.texts), pick(Self.numbers), "true", "false", "null"])
    }

    /// A key, sometimes with a letter written as an escape.
    private mutating func quoted(_ key: String) -> String {
        guard random.next() % 3 == 0, let first = key.unicodeScalars.first, first.isASCII else { return "\"\(key)\"" }
        return "\"" + String(format: "\\u%04x", first.value) + String(key.unicodeScalars.dropFirst()) + "\""
    }
}
