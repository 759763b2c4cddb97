import EventualAPI
import Foundation
import Testing

/// What `WireJSON` writes is stored (a record's fields, stamps and counter deltas) and compared:
/// its bytes for a value must never change, and JSON must read them back as the value.
@Suite("The one JSON writer")
struct WireJSONTests {
    /// Text at the edges of JSON escaping: quotes, backslashes, the short escapes, other control
    /// characters, DEL, a slash, non-Latin scripts, an emoji, a line separator, nothing.
    static let awkward = ["say \"cheese\"", #"C:\pantry\"#, "tab\there\nand\r\nlines", "\u{0}\u{1}\u{8}\u{c}\u{1f}", "del\u{7f}",
                          "a/b", "Ünïcödé ✓ 日本語 🥫", "line\u{2028}sep", "e\u{301}", ""]

    @Test func aRecordsFieldsAreWrittenSortedByteForByteAsStored() {
        let fields: [String: SyncValue] = [
            "name": .string("say \"hi\"\n"), "count": .integer(-5), "big": .integer(Int64.max), "small": .integer(Int64.min),
            "half": .number(2.5), "tiny": .number(1e-7), "whole": .number(3), "huge": .number(1e300), "endless": .number(.infinity),
            "flag": .boolean(true), "gone": .null, "path": .string("a/b\\c"), "ctl": .string("\u{1}\u{1f}\t"), "k\"ey": .string("日本"),
            "edge": .number(9_007_199_254_740_992),
        ]
        #expect(WireJSON.object(fields) == #"{"big":9223372036854775807,"count":-5,"ctl":"\u0001\u001f\t","edge":9007199254740992.0,"#
            + #""endless":null,"flag":true,"gone":null,"half":2.5,"huge":1e+300,"k\"ey":"日本","name":"say \"hi\"\n","path":"a/b\\c","#
            + #""small":-9223372036854775808,"tiny":1e-07,"whole":3}"#)
    }

    @Test func stampsAreWrittenSortedByteForByteAsStored() {
        #expect(WireJSON.object(["b": "1700000000000-00001-n", "a": "x\"y", "c": ""]) == #"{"a":"x\"y","b":"1700000000000-00001-n","c":""}"#)
        #expect(WireJSON.object([String: String]()) == "{}")
        #expect(WireJSON.object([String: SyncValue]()) == "{}")
    }

    @Test func aStringIsEscapedAsRFC8259AsksAndNoMore() {
        var out = ""
        for text in Self.awkward { WireJSON.appendString(text, to: &out) }
        #expect(out == #""say \"cheese\"""C:\\pantry\\""tab\there\nand\r\nlines""\u0000\u0001\u0008\u000c\u001f""del\#u{7f}""a/b""#
            + "\"Ünïcödé ✓ 日本語 🥫\"\"line\u{2028}sep\"\"e\u{301}\"\"\"")
    }

    @Test func bytesAndTextAreTheSameLiteral() {
        for text in Self.awkward {
            var string = "", data = Data()
            WireJSON.appendString(text, to: &string)
            WireJSON.appendString(text, to: &data)
            #expect(data == Data(string.utf8), "\(text)")
        }
    }

    @Test func whatItWritesReadsBackAsTheValue() throws {
        for text in Self.awkward {
            var literal = ""
            WireJSON.appendString(text, to: &literal)
            #expect(try JSONDecoder().decode(String.self, from: Data(literal.utf8)) == text)
        }
        let fields: [String: SyncValue] = Dictionary(uniqueKeysWithValues: Self.awkward.enumerated().map { ("f\($0.offset)\($0.element)", .string($0.element)) })
            .merging(["n": .number(-0.125), "i": .integer(-9_007_199_254_740_991), "z": .null, "t": .boolean(false)]) { $1 }
        #expect(try JSONDecoder().decode([String: SyncValue].self, from: Data(WireJSON.object(fields).utf8)) == fields)
    }

    @Test func numbersAreWholeWhenTheyCanBeAndShortestOtherwise() {
        func written(_ number: Double) -> String {
            var out = ""
            WireJSON.appendNumber(number, to: &out)
            return out
        }
        #expect([0, -0.0, 1, -1, 0.1, 1e-7, 123_456.75, 9_007_199_254_740_991, .nan, -.infinity].map(written)
            == ["0", "0", "1", "-1", "0.1", "1e-07", "123456.75", "9007199254740991", "null", "null"])
    }
}
