import Foundation

/// Rows of a CSV file as spreadsheets, banks and Open Food Facts write them (RFC 4180): fields
/// separated by a comma, a semicolon or a tab, quoted with `"` when they hold one of those, a quote
/// (doubled) or a line break; rows end with LF, CRLF or CR; a UTF-8 byte-order mark is skipped and
/// blank lines are no rows. The server's imports and the apps' read it alike.
///
/// NB: it reads bytes, not characters: the Swift CSV libraries that read characters took ten
/// times as long on a 1 MB product export, and neither refused a file that ends inside quotes.
public struct CSVReader {
    /// Why a file is not CSV.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// The line on which a quoted field begins that never ends.
        public let line: Int

        public var description: String { "the quoted field that begins on line \(line) never ends (a missing \")" }
    }

    /// The byte between fields: `,`, `;` or a tab.
    public let delimiter: UInt8
    /// The line (from 1) on which the row `next()` returned last begins.
    public private(set) var line = 0

    private let bytes: [UInt8]
    private var position = 0
    private var nextLine = 1

    private static let quote = UInt8(ascii: "\""), newline = UInt8(ascii: "\n"), carriageReturn = UInt8(ascii: "\r")

    /// A reader of `data`, whose delimiter is the one of `,` `;` and tab its first line holds most
    /// (`;` on a tie, then tab), unless given.
    public init(_ data: Data, delimiter: UInt8? = nil) {
        var bytes = [UInt8](data)
        // NB: spreadsheet exports often begin with a UTF-8 byte-order mark.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        self.bytes = bytes
        self.delimiter = delimiter ?? Self.delimiter(ofFirstLine: bytes)
    }

    /// The next row's fields, or nil after the last.
    public mutating func next() throws(Failure) -> [String]? {
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false, quoteLine = 0
        line = nextLine
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if quoted {
                if byte == Self.quote {
                    if position < bytes.count, bytes[position] == Self.quote {
                        field.append(byte)
                        position += 1
                    } else {
                        quoted = false
                    }
                    continue
                }
                if byte == Self.newline || (byte == Self.carriageReturn && (position == bytes.count || bytes[position] != Self.newline)) {
                    nextLine += 1
                }
                field.append(byte)
                continue
            }
            switch byte {
            case Self.quote where field.isEmpty:
                quoted = true
                quoteLine = nextLine
            case delimiter:
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
            case Self.newline, Self.carriageReturn:
                if byte == Self.carriageReturn, position < bytes.count, bytes[position] == Self.newline { position += 1 }
                nextLine += 1
                fields.append(String(decoding: field, as: UTF8.self))
                if fields == [""] {
                    // A blank line: the next row begins on the next one.
                    fields.removeAll()
                    line = nextLine
                    continue
                }
                return fields
            default:
                field.append(byte)
            }
        }
        if quoted { throw Failure(line: quoteLine) }
        guard !fields.isEmpty || !field.isEmpty else { return nil }
        fields.append(String(decoding: field, as: UTF8.self))
        return fields
    }

    private static func delimiter(ofFirstLine bytes: [UInt8]) -> UInt8 {
        let firstLine = bytes.prefix { $0 != newline && $0 != carriageReturn }
        let candidates = [UInt8(ascii: ";"), UInt8(ascii: "\t"), UInt8(ascii: ",")]
        let counts = candidates.map { candidate in firstLine.reduce(0) { $0 + ($1 == candidate ? 1 : 0) } }
        return candidates[counts.firstIndex(of: counts.max()!)!]
    }
}
