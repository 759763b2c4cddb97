import Foundation
import NIOCore

/// The fields of an `application/x-www-form-urlencoded` body, as a browser posts a form.
struct DashboardForm {
    private var fields: [String: String] = [:]

    init(_ body: ByteBuffer) {
        let text = String(buffer: body)
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]) else { continue }
            fields[name] = parts.count == 2 ? Self.decode(parts[1]) ?? "" : ""
        }
    }

    subscript(name: String) -> String? { fields[name] }

    /// `+` is a space; `%XX` a byte; a malformed escape makes the field unreadable (nil).
    private static func decode(_ text: Substring) -> String? {
        String(text.replacingOccurrences(of: "+", with: " ")).removingPercentEncoding
    }
}

/// A question's answer as CSV (RFC 4180): a header row, then the rows, quoted where needed.
enum DashboardCSV {
    static func render(columns: [String], rows: [[AnalyticsCell]]) -> String {
        var lines = [columns.map(field).joined(separator: ",")]
        for row in rows { lines.append(row.map { field($0.description) }.joined(separator: ",")) }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    private static func field(_ text: String) -> String {
        // NB: a cell starting with = + - @ would run as a formula in a spreadsheet; a quote mark
        // before it keeps it text (OWASP's CSV injection advice). Negative numbers stay numbers.
        var text = text
        if let first = text.first, "=+@\t\r".contains(first) || (first == "-" && Double(text) == nil) { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
