import Foundation

/// Draws a question's answer as inline SVG: no script, scales to the width of a phone.
struct SVGChart {
    static let palette = ["#2f7d5b", "#3b6fb6", "#c9782b", "#8e4fb0", "#c0394b", "#4d8f8f", "#7a7a2e", "#555555"]
    static let width = 480.0

    let question: AnalyticsQuestion
    let columns: [String]
    let rows: [[AnalyticsCell]]
    /// Every value of the ordered axis (`AnalyticsQuestion.axis`), or nil to show the rows' own.
    var axis: [String]? = nil

    func render() -> String {
        guard !rows.isEmpty else {
            return svg(height: 48, "<text x=\"8\" y=\"30\" class=\"empty\">No events in this range</text>")
        }
        switch question.chart {
        case .bars(let label, let value): return bars(label: index(label), values: [index(value)])
        case .pairedBars(let label, let values): return bars(label: index(label), values: values.map(index))
        case .columns(let x, let series, let value): return columnChart(x: index(x), series: series.map(index), value: index(value))
        }
    }

    private func index(_ name: String) -> Int { columns.firstIndex(of: name) ?? 0 }

    /// Horizontal bars, one per row and value column: labels on the left, so long names read on
    /// a narrow screen; a legend when there are several value columns.
    private func bars(label: Int, values: [Int]) -> String {
        let top = max(rows.flatMap { row in values.map { row[$0].doubleValue ?? 0 } }.max() ?? 0, Double.leastNonzeroMagnitude)
        let barHeight = 18.0, gap = 8.0, labelWidth = 130.0, valueWidth = 70.0
        let legend = values.count > 1 ? 24.0 : 0
        let rowHeight = Double(values.count) * barHeight + gap
        let barSpace = Self.width - labelWidth - valueWidth
        var body = ""
        if values.count > 1 {
            for (offset, column) in values.enumerated() {
                let lx = labelWidth + Double(offset) * 140
                body += "<rect x=\"\(Self.format(lx))\" y=\"4\" width=\"12\" height=\"12\" fill=\"\(Self.palette[offset % Self.palette.count])\"/>"
                body += "<text x=\"\(Self.format(lx + 16))\" y=\"15\" class=\"legend\">\(Self.escape(columns[column]))</text>"
            }
        }
        for (position, row) in rows.enumerated() {
            let name = row[label].description
            let top0 = legend + Double(position) * rowHeight + 4
            body += "<text x=\"\(Self.format(labelWidth - 6))\" y=\"\(Self.format(top0 + 14))\" text-anchor=\"end\">\(Self.escape(Self.clip(name, 18)))</text>"
            for (offset, column) in values.enumerated() {
                let cell = row[column], value = cell.doubleValue ?? 0
                let y = top0 + Double(offset) * barHeight
                let length = max(value / top * barSpace, value > 0 ? 1 : 0)
                let series = values.count > 1 ? " data-series=\"\(Self.escape(columns[column]))\"" : ""
                body += "<g class=\"bar\" data-label=\"\(Self.escape(name))\"\(series) data-value=\"\(Self.escape(cell.description))\">"
                body += "<title>\(Self.escape(name))\(values.count > 1 ? " " + Self.escape(columns[column]) : ""): \(Self.escape(cell.description))</title>"
                body += "<rect x=\"\(Self.format(labelWidth))\" y=\"\(Self.format(y))\" width=\"\(Self.format(length))\" height=\"\(Self.format(barHeight - 3))\" fill=\"\(Self.palette[offset % Self.palette.count])\"/>"
                body += "<text x=\"\(Self.format(labelWidth + length + 4))\" y=\"\(Self.format(y + 13))\">\(Self.escape(cell.description))</text>"
                body += "</g>"
            }
        }
        return svg(height: legend + Double(rows.count) * rowHeight + 8, body)
    }

    /// Columns over an ordered axis, grouped by series, with a legend.
    private func columnChart(x: Int, series: Int?, value: Int) -> String {
        var categories: [String] = axis ?? [], seriesNames: [String] = []
        var values: [String: [String: AnalyticsCell]] = [:]
        for row in rows {
            let category = row[x].description, name = series.map { row[$0].description } ?? ""
            if !categories.contains(category) { categories.append(category) }
            if !seriesNames.contains(name) { seriesNames.append(name) }
            values[category, default: [:]][name] = row[value]
        }
        let top = max(rows.compactMap { $0[value].doubleValue }.max() ?? 0, Double.leastNonzeroMagnitude)
        let plotTop = series == nil ? 16.0 : 36.0, plotHeight = 180.0, left = 44.0
        let slot = (Self.width - left - 8) / Double(max(categories.count, 1))
        let barWidth = max(1, (slot - 2) / Double(max(seriesNames.count, 1)))
        var body = ""
        if series != nil {
            for (offset, name) in seriesNames.enumerated() {
                let lx = left + Double(offset) * 90
                body += "<rect x=\"\(Self.format(lx))\" y=\"6\" width=\"12\" height=\"12\" fill=\"\(Self.palette[offset % Self.palette.count])\"/>"
                body += "<text x=\"\(Self.format(lx + 16))\" y=\"17\" class=\"legend\">\(Self.escape(Self.clip(name, 12)))</text>"
            }
        }
        body += "<text x=\"\(Self.format(left - 4))\" y=\"\(Self.format(plotTop + 10))\" text-anchor=\"end\" class=\"axis\">\(Self.escape(AnalyticsCell.number(top).description))</text>"
        body += "<text x=\"\(Self.format(left - 4))\" y=\"\(Self.format(plotTop + plotHeight))\" text-anchor=\"end\" class=\"axis\">0</text>"
        body += "<line x1=\"\(Self.format(left))\" y1=\"\(Self.format(plotTop + plotHeight))\" x2=\"\(Self.format(Self.width - 4))\" y2=\"\(Self.format(plotTop + plotHeight))\" stroke=\"#999\"/>"
        let labelEvery = max(1, Int((Double(categories.count) / 8).rounded(.up)))
        for (position, category) in categories.enumerated() {
            let slotX = left + Double(position) * slot
            for (offset, name) in seriesNames.enumerated() {
                guard let cell = values[category]?[name], let number = cell.doubleValue else { continue }
                let height = number / top * plotHeight
                let title = series == nil ? "\(category): \(cell)" : "\(category) \(name): \(cell)"
                body += "<g class=\"bar\" data-label=\"\(Self.escape(category))\" data-series=\"\(Self.escape(name))\" data-value=\"\(Self.escape(cell.description))\">"
                body += "<title>\(Self.escape(title))</title>"
                body += "<rect x=\"\(Self.format(slotX + 1 + Double(offset) * barWidth))\" y=\"\(Self.format(plotTop + plotHeight - height))\" width=\"\(Self.format(barWidth))\" height=\"\(Self.format(height))\" fill=\"\(Self.palette[offset % Self.palette.count])\"/>"
                body += "</g>"
            }
            if position % labelEvery == 0 {
                body += "<text x=\"\(Self.format(slotX + slot / 2))\" y=\"\(Self.format(plotTop + plotHeight + 16))\" text-anchor=\"middle\" class=\"axis\">\(Self.escape(Self.shortLabel(category)))</text>"
            }
        }
        return svg(height: plotTop + plotHeight + 24, body)
    }

    private func svg(height: Double, _ body: String) -> String {
        "<svg class=\"chart\" role=\"img\" aria-label=\"\(Self.escape(question.title))\" viewBox=\"0 0 \(Self.format(Self.width)) \(Self.format(height))\" "
            + "width=\"100%\" preserveAspectRatio=\"xMinYMin meet\" xmlns=\"http://www.w3.org/2000/svg\">\(body)</svg>"
    }

    /// A day shown as MM-DD under a column, where a whole date would not fit.
    private static func shortLabel(_ text: String) -> String {
        text.count == 10 && text.dropFirst(4).first == "-" ? String(text.dropFirst(5)) : clip(text, 8)
    }

    private static func clip(_ text: String, _ length: Int) -> String {
        text.count > length ? String(text.prefix(length - 1)) + "…" : text
    }

    static func format(_ number: Double) -> String { String(format: "%.1f", number) }

    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
