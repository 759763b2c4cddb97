import Foundation

/// The one hand-written JSON writer: the engine's push body, the server's stored records (their
/// fields, stamps and counter deltas, keys sorted) and its hand-written answers.
///
/// NB: a drain of 10,000 changes stores three objects per record; through `JSONEncoder` they were
/// a large share of the server's time. What it writes is stored and compared: its bytes for a
/// value never change (`WireJSONTests` holds them).
public enum WireJSON {
    /// `{…}` of the fields, keys sorted: what the server stores of a record.
    public static func object(_ fields: [String: SyncValue]) -> String {
        var out = "{"
        for (index, key) in fields.keys.sorted().enumerated() {
            if index > 0 { out += "," }
            appendString(key, to: &out)
            out += ":"
            appendValue(fields[key]!, to: &out)
        }
        return out + "}"
    }

    /// `{…}` of texts, keys sorted: what the server stores of a record's stamps.
    public static func object(_ texts: [String: String]) -> String {
        var out = "{"
        for (index, key) in texts.keys.sorted().enumerated() {
            if index > 0 { out += "," }
            appendString(key, to: &out)
            out += ":"
            appendString(texts[key]!, to: &out)
        }
        return out + "}"
    }

    public static func appendValue(_ value: SyncValue, to out: inout String) {
        switch value {
        case .string(let text): appendString(text, to: &out)
        case .integer(let whole): out += String(whole)
        case .number(let number): appendNumber(number, to: &out)
        case .boolean(let flag): out += flag ? "true" : "false"
        case .null: out += "null"
        }
    }

    /// A finite number as JSON: whole values in range without a fraction, others in Swift's
    /// shortest round-trip form (`1e-07`, `2.5`), which JSON accepts; not finite, `null`.
    public static func appendNumber(_ number: Double, to out: inout String) {
        guard number.isFinite else {
            out += "null"
            return
        }
        if let whole = Int64(exactly: number), whole.magnitude < 1 << 53 {
            out += String(whole)
        } else {
            out += String(number)
        }
    }

    /// A JSON string literal, escaped as RFC 8259 requires: `"` and `\`, `\n`, `\r` and `\t` by
    /// their short forms, other control characters as `\u00xx`, the rest as it is.
    public static func appendString(_ text: String, to out: inout String) {
        out += "\""
        guard needsEscaping(text) else {
            out += text
            out += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// The same literal appended as bytes (the engine's push body).
    public static func appendString(_ text: String, to data: inout Data) {
        guard needsEscaping(text) else {
            data.append(UInt8(ascii: "\""))
            var text = text
            text.withUTF8 { data.append($0) }
            data.append(UInt8(ascii: "\""))
            return
        }
        var literal = ""
        appendString(text, to: &literal)
        data.append(contentsOf: literal.utf8)
    }

    /// The bytes `appendString` writes for `text`, quotes included.
    public static func stringLength(_ text: String) -> Int {
        guard needsEscaping(text) else { return text.utf8.count + 2 }
        return text.unicodeScalars.reduce(2) { length, scalar in
            switch scalar {
            case "\"", "\\", "\n", "\r", "\t": return length + 2
            case _ where scalar.value < 0x20: return length + 6
            default: return length + String(scalar).utf8.count
            }
        }
    }

    private static func needsEscaping(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }
}
