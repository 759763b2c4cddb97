import Foundation

/// Rows of a CSV file (RFC 4180 quoting; comma, semicolon or tab, guessed from the header).
struct CSVTable {
    let header: [String]
    let rows: [(line: Int, fields: [String])]

    init(text: String) throws(SpendingError) {
        let firstLine = text.prefix { $0 != "\n" && $0 != "\r\n" }
        let delimiter: Character = [";", "\t", ","].max { a, b in firstLine.filter { $0 == a }.count < firstLine.filter { $0 == b }.count } ?? ","
        var records: [(Int, [String])] = []
        var field = "", fields: [String] = [], quoted = false, line = 1, recordLine = 1
        var iterator = text.makeIterator()
        var pending: Character? = nil
        func endRecord() {
            fields.append(field)
            field = ""
            if !(fields.count == 1 && fields[0].isEmpty) { records.append((recordLine, fields)) }
            fields = []
        }
        while let character = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if character == "\"" {
                    if let next = iterator.next() {
                        if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                    } else { quoted = false }
                } else {
                    if character == "\n" || character == "\r\n" { line += 1 }
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"" where field.isEmpty: quoted = true
            case delimiter: fields.append(field); field = ""
            case "\n", "\r\n", "\r":
                endRecord()
                line += 1
                recordLine = line
            default: field.append(character)
            }
        }
        if quoted { throw .file("The CSV file ends inside a quoted field (a missing \")") }
        if !field.isEmpty || !fields.isEmpty { endRecord() }
        guard let first = records.first else { throw .file("The CSV file is empty") }
        header = first.1.map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\u{FEFF}")) }
        rows = records.dropFirst().map { (line: $0.0, fields: $0.1) }
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
