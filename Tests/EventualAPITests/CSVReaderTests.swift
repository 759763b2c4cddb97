import Foundation
import Testing
import EventualAPI

@Suite("CSVReader: the one CSV reader of the server's imports and the apps")
struct CSVReaderTests {
    func rows(_ text: String, delimiter: UInt8? = nil) throws -> [[String]] {
        var reader = CSVReader(Data(text.utf8), delimiter: delimiter)
        var rows: [[String]] = []
        while let row = try reader.next() { rows.append(row) }
        return rows
    }

    @Test func quotedFieldsKeepDelimitersQuotesAndLineBreaks() throws {
        #expect(try rows("a,b\n\"x, y\",\"he said \"\"hi\"\"\"\n\"line 1\nline 2\",z\n")
            == [["a", "b"], ["x, y", "he said \"hi\""], ["line 1\nline 2", "z"]])
    }

    @Test func eachRowSaysTheLineItBeginsOn() throws {
        var reader = CSVReader(Data("h1,h2\n\"two\nlines\",x\r\n\nlast,row".utf8))
        var lines: [Int] = []
        while try reader.next() != nil { lines.append(reader.line) }
        #expect(lines == [1, 2, 5], "a quoted line break and a blank line both count")
    }

    @Test(arguments: ["a,b\n1,2\n", "a,b\r\n1,2\r\n", "a,b\r1,2\r", "a,b\n1,2", "\u{FEFF}a,b\n1,2\n", "a,b\n\n1,2\n\n"])
    func lineEndingsAByteOrderMarkAndBlankLinesReadAlike(_ text: String) throws {
        #expect(try rows(text) == [["a", "b"], ["1", "2"]])
    }

    @Test func theDelimiterIsTheOneTheHeaderUsesMost() throws {
        #expect(try rows("date;amount;note\n2026-01-10;1,50;a, b\n") == [["date", "amount", "note"], ["2026-01-10", "1,50", "a, b"]])
        #expect(try rows("date\tamount\n2026-01-10\t1,50\n") == [["date", "amount"], ["2026-01-10", "1,50"]])
        #expect(try rows("\"a;b\",c,d\n1,2,3\n") == [["a;b", "c", "d"], ["1", "2", "3"]])
        #expect(CSVReader(Data("a;b,c\n".utf8)).delimiter == UInt8(ascii: ";"), "a tie goes to the semicolon")
        #expect(try rows("a;b\n1;2\n", delimiter: UInt8(ascii: ",")) == [["a;b"], ["1;2"]], "unless one is given")
    }

    @Test func fieldsKeepTheirSpacesAndEmptyFieldsCount() throws {
        #expect(try rows("a,b,c\n  x , y ,\n,,\n") == [["a", "b", "c"], ["  x ", " y ", ""], ["", "", ""]])
    }

    @Test func aQuoteInsideAnUnquotedFieldIsText() throws {
        #expect(try rows("a,b\n5\" screen,x\n\"ab\"cd,2\n") == [["a", "b"], ["5\" screen", "x"], ["abcd", "2"]])
    }

    @Test func aFileThatEndsInsideQuotesIsRefusedWithItsLine() throws {
        let failure = #expect(throws: CSVReader.Failure.self) { try rows("a,b\n1,2\n\"never closed,3\n4,5\n") }
        #expect(failure?.line == 3)
        #expect(failure?.description == "the quoted field that begins on line 3 never ends (a missing \")")
    }

    @Test func nothingIsNoRows() throws {
        #expect(try rows("").isEmpty)
        #expect(try rows("\u{FEFF}").isEmpty)
        #expect(try rows("\n\r\n").isEmpty)
    }

    @Test func textThatIsNotUTF8IsReadWithReplacementCharacters() throws {
        var reader = CSVReader(Data([0x61, 0x2C, 0xFF, 0x0A]))
        #expect(try reader.next() == ["a", "\u{FFFD}"])
    }
}
