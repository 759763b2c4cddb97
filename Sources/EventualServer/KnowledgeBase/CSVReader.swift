import Foundation

/// Rows of an RFC 4180 CSV text: fields separated by commas, optionally quoted with `"`, a quote
/// inside a quoted field doubled, line breaks inside quoted fields kept.
struct CSVReader: Sequence, IteratorProtocol {
    private let bytes: [UInt8]
    private var position = 0

    init(_ data: Data) {
        var bytes = [UInt8](data)
        // NB: spreadsheet exports often begin with a UTF-8 byte-order mark.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        self.bytes = bytes
    }

    mutating func next() -> [String]? {
        guard position < bytes.count else { return nil }
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if position < bytes.count, bytes[position] == UInt8(ascii: "\"") {
                        field.append(byte)
                        position += 1
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                quoted = true
            case UInt8(ascii: ","):
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
            case UInt8(ascii: "\n"):
                fields.append(String(decoding: field, as: UTF8.self))
                return fields
            case UInt8(ascii: "\r"):
                continue
            default:
                field.append(byte)
            }
        }
        fields.append(String(decoding: field, as: UTF8.self))
        return fields
    }
}
