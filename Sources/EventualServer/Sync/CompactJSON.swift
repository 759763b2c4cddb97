import EventualAPI
import Foundation

/// Writes the small JSON objects a sync record is stored as (its fields, their stamps, its
/// counter deltas) with keys sorted, byte for byte what `JSONEncoder` with `.sortedKeys` writes
/// for them, without its generic machinery.
///
/// NB: a drain of 10,000 changes stores three of these per record; through `JSONEncoder` they
/// were a large share of the server's time.
enum CompactJSON {
    static func object(_ fields: [String: SyncValue]) -> String {
        var out = "{"
        for (index, key) in fields.keys.sorted().enumerated() {
            if index > 0 { out += "," }
            appendString(key, to: &out)
            out += ":"
            appendValue(fields[key]!, to: &out)
        }
        return out + "}"
    }

    static func object(_ texts: [String: String]) -> String {
        var out = "{"
        for (index, key) in texts.keys.sorted().enumerated() {
            if index > 0 { out += "," }
            appendString(key, to: &out)
            out += ":"
            appendString(texts[key]!, to: &out)
        }
        return out + "}"
    }

    static func appendValue(_ value: SyncValue, to out: inout String) {
        switch value {
        case .string(let text): appendString(text, to: &out)
        case .integer(let whole): out += String(whole)
        case .number(let number): appendNumber(number, to: &out)
        case .boolean(let flag): out += flag ? "true" : "false"
        case .null: out += "null"
        }
    }

    /// A finite number as JSON: whole values in range without a fraction, others in Swift's
    /// shortest round-trip form (`1e-07`, `2.5`), which JSON accepts.
    static func appendNumber(_ number: Double, to out: inout String) {
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

    /// A JSON string literal, escaped as RFC 8259 requires.
    static func appendString(_ text: String, to out: inout String) {
        out += "\""
        var needsEscaping = false
        for byte in text.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            needsEscaping = true
            break
        }
        guard needsEscaping else {
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
}
