/// Columns aligned to their widest cell, a header, two spaces between columns; no wider than the
/// output (`Terminal.columns`): the widest columns give way first, and a cell cut short ends with "…".
/// Widths are terminal columns (`DisplayWidth`): "飲み物" takes six, "🥛" two.
/// A table may say which columns are never cut (amounts, ids, dates: a cut one is a wrong one) and
/// which free-text ones give way before the others.
public struct Table {
    public var headers: [String]
    public var rows: [[Cell]] = []
    /// Headers of the columns never cut, whatever the width (the line is then wider).
    public var whole: Set<String> = []
    /// Headers of the free-text columns (a note, a name) narrowed before any other.
    public var cutFirst: Set<String> = []
    /// Columns cut only once the others are down to their headers (a date before a name).
    public var cutLast: Set<String> = []

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
        let widths = Self.fitted(naturalWidths(), into: width,
                                 whole: Set(headers.indices.filter { whole.contains(headers[$0]) }),
                                 first: Set(headers.indices.filter { cutFirst.contains(headers[$0]) }),
                                 last: Set(headers.indices.filter { cutLast.contains(headers[$0]) }),
                                 headers: headers.map(DisplayWidth.of))
        func line(_ cells: [Cell]) -> String {
            cells.enumerated().map { index, cell in
                guard index < widths.count else { return "" }
                let text = Self.cut(cell.text, to: widths[index])
                let padding = index == cells.count - 1 ? "" : String(repeating: " ", count: max(0, widths[index] - DisplayWidth.of(text)))
                return Terminal.paint(text, cell.colour) + padding
            }.joined(separator: "  ")
        }
        return ([line(headers.map { Cell($0, .bold) })] + rows.map(line)).joined(separator: "\n")
    }

    private func naturalWidths() -> [Int] {
        var widths = headers.map(DisplayWidth.of)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], DisplayWidth.of(cell.text)) }
        }
        return widths
    }

    /// The narrowest a column gets, "…" included.
    static let minimumWidth = 4

    /// Narrows the widest columns, one character at a time, until the line fits `width`: those in
    /// `first` before the others and `last` after them, never those in `whole`; each down to its
    /// header's width (`headers`) before any header is cut, then down to `minimumWidth`.
    static func fitted(_ natural: [Int], into width: Int, whole: Set<Int> = [], first: Set<Int> = [], last: Set<Int> = [],
                       headers: [Int] = []) -> [Int] {
        var widths = natural
        let separators = 2 * max(0, widths.count - 1)
        let cuttable = widths.indices.filter { !whole.contains($0) }
        let header = { (index: Int) in max(minimumWidth, index < headers.count ? headers[index] : 0) }
        let early = cuttable.filter(first.contains), middle = cuttable.filter { !last.contains($0) }
        let passes: [([Int], (Int) -> Int)] = [(early, header), (middle, header), (cuttable, header),
                                               (early, { _ in minimumWidth }), (middle, { _ in minimumWidth }), (cuttable, { _ in minimumWidth })]
        for (candidates, floor) in passes {
            while widths.reduce(0, +) + separators > width,
                  let widest = candidates.filter({ widths[$0] > floor($0) }).max(by: { widths[$0] < widths[$1] }) {
                widths[widest] -= 1
            }
        }
        return widths
    }

    /// `text` in exactly `width` columns: cut with "…", or padded with spaces.
    public static func padded(_ text: String, to width: Int) -> String {
        let cut = cut(text, to: width)
        return cut + String(repeating: " ", count: max(0, width - DisplayWidth.of(cut)))
    }

    /// `text` in at most `width` columns, ending with "…" when cut.
    public static func cut(_ text: String, to width: Int) -> String {
        DisplayWidth.of(text) <= width ? text : DisplayWidth.prefix(text, columns: max(0, width - 1)) + "…"
    }
}
