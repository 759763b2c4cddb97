import EventualAPI
import Foundation

/// A CSV file read whole: its header and its rows with the line each begins on.
struct CSVTable {
    let header: [String]
    let rows: [(line: Int, fields: [String])]

    init(text: String) throws(SpendingError) {
        var reader = CSVReader(Data(text.utf8))
        var records: [(line: Int, fields: [String])] = []
        do {
            while let fields = try reader.next() { records.append((reader.line, fields)) }
        } catch {
            throw .file("The CSV file ends inside the quoted field that begins on line \(error.line) (a missing \")")
        }
        guard let first = records.first else { throw .file("The CSV file is empty") }
        header = first.fields.map { $0.trimmingCharacters(in: .whitespaces) }
        rows = Array(records.dropFirst())
    }

    /// The column of the first of `names` the header has (any case).
    func column(_ names: [String]) -> Int? {
        let lowered = header.map { $0.lowercased() }
        for name in names { if let index = lowered.firstIndex(of: name.lowercased()) { return index } }
        return nil
    }

    /// Text as CSV writes it: quoted when it holds a delimiter, a quote or a line break.
    static func escape(_ text: String) -> String {
        // NB: a leading = + - @ makes spreadsheets run a formula; a quote mark keeps it text (and a
        // leading quote mark gets one more, so that `unescape` gives back exactly what was written).
        let guarded = text.first.map { "=+-@'".contains($0) } == true ? "'" + text : text
        guard guarded.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == ";" }) else { return guarded }
        return "\"" + guarded.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The text `escape` was given.
    static func unescape(_ field: String) -> String {
        guard field.count > 1, field.first == "'", let second = field.dropFirst().first, "=+-@'".contains(second) else { return field }
        return String(field.dropFirst())
    }
}
