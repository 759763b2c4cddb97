/// Columns aligned to their widest cell, a header, two spaces between columns; no wider than the
/// output (`Terminal.columns`): the widest columns give way first, and a cell cut short ends with "…".
public struct Table {
    public var headers: [String]
    public var rows: [[Cell]] = []

    /// A cell's text and its colour on a terminal (the colour does not count in the width).
    public struct Cell: ExpressibleByStringLiteral {
        let text: String
        let colour: Terminal.Colour?
        public init(_ text: String, _ colour: Terminal.Colour? = nil) {
            // NB: a line break or a tab inside a cell would break the table's alignment.
            self.text = String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 })
            self.colour = colour
        }
        public init(stringLiteral value: String) { self.init(value) }
    }

    public init(_ headers: String...) { self.headers = headers }

    public mutating func add(_ cells: Cell...) { rows.append(cells) }

    /// A row of plain cells.
    public mutating func add(_ cells: String...) { rows.append(cells.map { Cell($0) }) }

    /// The table in at most `width` columns (each line), unless it has too many columns to fit at
    /// all: then each keeps a few characters.
    public func render(width: Int = Terminal.columns) -> String {
        let widths = Self.fitted(naturalWidths(), into: width)
        func line(_ cells: [Cell]) -> String {
            cells.enumerated().map { index, cell in
                guard index < widths.count else { return "" }
                let text = Self.cut(cell.text, to: widths[index])
                let padding = index == cells.count - 1 ? "" : String(repeating: " ", count: widths[index] - text.count)
                return Terminal.paint(text, cell.colour) + padding
            }.joined(separator: "  ")
        }
        return ([line(headers.map { Cell($0, .bold) })] + rows.map(line)).joined(separator: "\n")
    }

    private func naturalWidths() -> [Int] {
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.text.count) }
        }
        return widths
    }

    /// The narrowest a column gets, "…" included.
    static let minimumWidth = 4

    /// Narrows the widest columns, one character at a time, until the line fits `width`.
    static func fitted(_ natural: [Int], into width: Int) -> [Int] {
        var widths = natural
        let separators = 2 * max(0, widths.count - 1)
        while widths.reduce(0, +) + separators > width,
              let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > minimumWidth {
            widths[widest] -= 1
        }
        return widths
    }

    /// `text` in at most `width` characters, ending with "…" when cut.
    public static func cut(_ text: String, to width: Int) -> String {
        text.count <= width ? text : String(text.prefix(max(0, width - 1))) + "…"
    }
}
