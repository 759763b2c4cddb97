import Foundation

/// Holds the numbers of a JSON body to a schema's ranges in one pass over its bytes, reading only
/// what a range needs: the keys on the way to a bounded number, and the number. Everything else
/// (text, flags, the parts of a body whose schema bounds nothing) is stepped over without a value
/// being made, so the body is decoded once, by the generated decoder, not twice.
///
/// It answers what `ContractCheck.problem(with:against:at:)` answers for the decoded body, with one
/// difference of order: the first problem in the body's order, not in its keys' sorted order. A
/// body it cannot read is no problem here: the generated decoder refuses it with its own message.
/// NB: it reads more than JSON allows (a leading zero, a raw control character in a text) and
/// never less, so a body the decoder takes always has its numbers held here; a key given twice
/// has both values held.
struct ContractWalk {
    /// Arrays and objects inside each other past this are refused: a decoder refuses them too, and
    /// the walk must not run out of stack on `[[[[...`.
    static let deepest = 512

    /// The first range `body` breaks, naming where (`changes[2].deltas.quantity`); nil when it
    /// meets them all or cannot be read.
    static func problem(in body: Data, against schema: ContractLimits.Schema) -> String? {
        body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> String? in
            var walk = ContractWalk(bytes: bytes)
            do throws(Unreadable) {
                walk.skipBOM()
                try walk.value(against: [schema], depth: 0)
                walk.skipWhitespace()
                guard walk.index == bytes.count else { return nil }
                return walk.problem
            } catch .tooDeep {
                return "the body nests arrays and objects more than \(deepest) deep"
            } catch {
                return nil
            }
        }
    }

    private enum Unreadable: Error {
        case malformed, tooDeep
    }

    /// A step on the way to the value being read, to name it when it breaks a range.
    private enum Step {
        case key(String), index(Int)
    }

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var trail: [Step] = []
    /// The first problem met; the walk goes on to the end to know that the body can be read.
    private var problem: String?

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private var path: String {
        trail.reduce(into: "") { path, step in
            switch step {
            case .key(let key): path += path.isEmpty ? key : ".\(key)"
            case .index(let index): path += "[\(index)]"
            }
        }
    }

    // MARK: Values

    /// Reads one value, holding it to each of `schemas` that bounds a number.
    private mutating func value(against schemas: [ContractLimits.Schema], depth: Int) throws(Unreadable) {
        skipWhitespace()
        let active = problem == nil ? schemas.filter(\.boundsNumbers) : []
        guard !active.isEmpty else { return try skipValue(depth: depth) }
        if active.contains(where: { !$0.alternatives.isEmpty }) { return try valueWithAlternatives(active, depth: depth) }
        switch try peek() {
        case UInt8(ascii: "{"): try object(against: active, depth: depth)
        case UInt8(ascii: "["): try array(against: active, depth: depth)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let (number, shown) = try self.number()
            for schema in active {
                if let found = ContractCheck.problem(with: number, shown: shown, against: schema, at: path) {
                    problem = found
                    break
                }
            }
        default: try skipValue(depth: depth)
        }
    }

    /// A value some schema of which has `oneOf` or `anyOf`: decoded alone (the contract has such
    /// schemas only for small values) and held to them as the decoded body was.
    private mutating func valueWithAlternatives(_ schemas: [ContractLimits.Schema], depth: Int) throws(Unreadable) {
        let start = index
        try skipValue(depth: depth)
        let slice = Data(bytes[start..<index])
        guard let decoded = try? JSONDecoder().decode(JSONValue.self, from: slice) else { throw .malformed }
        for schema in schemas {
            if let found = ContractCheck.problem(with: decoded, against: schema, at: path) {
                problem = found
                return
            }
        }
    }

    private mutating func object(against schemas: [ContractLimits.Schema], depth: Int) throws(Unreadable) {
        guard depth < Self.deepest else { throw .tooDeep }
        index += 1
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") { return index += 1 }
        while true {
            skipWhitespace()
            guard try peek() == UInt8(ascii: "\"") else { throw .malformed }
            let key = try string()
            skipWhitespace()
            guard try next() == UInt8(ascii: ":") else { throw .malformed }
            let children = schemas.flatMap { schema in
                [schema.properties[key] ?? schema.additionalProperties, schema.everyProperty].compactMap { $0 }
            }
            trail.append(.key(key))
            try value(against: children, depth: depth + 1)
            trail.removeLast()
            skipWhitespace()
            switch try next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return
            default: throw .malformed
            }
        }
    }

    private mutating func array(against schemas: [ContractLimits.Schema], depth: Int) throws(Unreadable) {
        guard depth < Self.deepest else { throw .tooDeep }
        index += 1
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") { return index += 1 }
        let items = schemas.compactMap(\.items)
        var position = 0
        while true {
            trail.append(.index(position))
            try value(against: items, depth: depth + 1)
            trail.removeLast()
            position += 1
            skipWhitespace()
            switch try next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return
            default: throw .malformed
            }
        }
    }

    /// Steps over one value of any kind, checking only that it can be read.
    private mutating func skipValue(depth: Int) throws(Unreadable) {
        skipWhitespace()
        switch try peek() {
        case UInt8(ascii: "{"): try object(against: [], depth: depth)
        case UInt8(ascii: "["): try array(against: [], depth: depth)
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try skipNumber()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: throw .malformed
        }
    }

    // MARK: Tokens

    /// A number's value and the text a message shows it as: a whole number as written when it
    /// fits 64 bits (as the decoded body held it), any other as a Double prints.
    private mutating func number() throws(Unreadable) -> (Double, String) {
        let text = try numberText()
        if let whole = Int64(text) { return (Double(whole), String(whole)) }
        guard let number = Double(text) else { throw .malformed }
        if let whole = Int64(exactly: number) { return (number, String(whole)) }
        return (number, "\(number)")
    }

    private mutating func numberText() throws(Unreadable) -> String {
        let start = try skipNumber()
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// Steps over the characters a number may hold, answering where they began. NB: more than a
    /// number's grammar (`1e-+2`): what is not a number fails as one when it is read.
    private mutating func skipNumber() throws(Unreadable) -> Int {
        let start = index
        scan: while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"),
                 UInt8(ascii: "+"), UInt8(ascii: "-"):
                index += 1
            default:
                break scan
            }
        }
        guard index > start else { throw .malformed }
        return start
    }

    /// A text's value (a key's), its escapes undone; one that is not Unicode reads as U+FFFD,
    /// which names no property of the contract.
    private mutating func string() throws(Unreadable) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var plain = index
        func flush(_ end: Int) {
            scalars.append(contentsOf: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[plain..<end]), as: UTF8.self).unicodeScalars)
        }
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                flush(index)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush(index)
                index += 1
                scalars.append(try escaped())
                plain = index
            default:
                index += 1
            }
        }
        throw .malformed
    }

    /// The character an escape after a backslash stands for.
    private mutating func escaped() throws(Unreadable) -> Unicode.Scalar {
        switch try next() {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hexUnit()
            guard (0xD800...0xDBFF).contains(unit) else { return Unicode.Scalar(unit) ?? "\u{FFFD}" }
            // NB: a high surrogate is a character only with the low one after it, written as an escape too.
            let rest = index
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return "\u{FFFD}" }
            index += 2
            let low = try hexUnit()
            guard (0xDC00...0xDFFF).contains(low) else {
                index = rest
                return "\u{FFFD}"
            }
            return Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)) ?? "\u{FFFD}"
        default: throw .malformed
        }
    }

    private mutating func hexUnit() throws(Unreadable) -> UInt16 {
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let digit: UInt8
            switch try next() {
            case let byte where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte): digit = byte - UInt8(ascii: "0")
            case let byte where (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte): digit = byte - UInt8(ascii: "a") + 10
            case let byte where (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte): digit = byte - UInt8(ascii: "A") + 10
            default: throw .malformed
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    /// Steps over a text without making its value: to its closing quote, past each escape.
    private mutating func skipString() throws(Unreadable) {
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"): index += 2
            default: index += 1
            }
        }
        throw .malformed
    }

    private mutating func literal(_ word: StaticString) throws(Unreadable) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw .malformed }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw .malformed }
        index += count
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// NB: a decoder may take a UTF-8 byte order mark before the body; so does the walk.
    private mutating func skipBOM() {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    }

    private func peek() throws(Unreadable) -> UInt8 {
        guard index < bytes.count else { throw .malformed }
        return bytes[index]
    }

    private mutating func next() throws(Unreadable) -> UInt8 {
        let byte = try peek()
        index += 1
        return byte
    }
}
