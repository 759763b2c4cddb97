/// Columns aligned to their widest cell, a header, two spaces between columns.
public struct Table {
    public var headers: [String]
    public var rows: [[Cell]] = []

    /// A cell's text and its colour on a terminal (the colour does not count in the width).
    public struct Cell: ExpressibleByStringLiteral {
        let text: String
        let colour: Terminal.Colour?
        public init(_ text: String, _ colour: Terminal.Colour? = nil) {
            self.text = text
            self.colour = colour
        }
        public init(stringLiteral value: String) { self.init(value) }
    }

    public init(_ headers: String...) { self.headers = headers }

    public mutating func add(_ cells: Cell...) { rows.append(cells) }

    /// A row of plain cells.
    public mutating func add(_ cells: String...) { rows.append(cells.map { Cell($0) }) }

    public func render() -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.text.count) }
        }
        func line(_ cells: [Cell]) -> String {
            cells.enumerated().map { index, cell in
                let padding = index == cells.count - 1 ? "" : String(repeating: " ", count: widths[index] - cell.text.count)
                return Terminal.paint(cell.text, cell.colour) + padding
            }.joined(separator: "  ")
        }
        return ([line(headers.map { Cell($0, .bold) })] + rows.map(line)).joined(separator: "\n")
    }
}
