import EventualAPI
import SQLKit

/// What a pull asks for: some collections, each whole or a slice of it by one field. A device
/// names its app's collections, so that the server never sends it another app's records.
///
/// On the wire each `collection` query value is `name`, `name:field>=value` or `name:field<value`.
/// `>=` takes the records whose field holds a value of the bound's type at least the bound; `<`
/// takes every other record (the field absent, null, of another type, or below). So the two
/// slices of one bound split a collection in two with nothing left over and nothing twice: a
/// device pulls the recent ones first and the rest after (SpendiQ's last 30 days). A bound that
/// reads as a number compares numbers; any other compares text, byte by byte.
struct PullSubscription: Sendable, Equatable {
    struct Slice: Sendable, Equatable {
        enum Side: Sendable, Equatable { case atLeast, below }
        enum Bound: Sendable, Equatable {
            case number(Double)
            case text(String)
        }

        let field: String
        let side: Side
        let bound: Bound
    }

    struct Part: Sendable, Equatable {
        let collection: String
        /// nil for the whole collection.
        let slice: Slice?
    }

    let parts: [Part]
    /// A back fill of fields (`field` values): only the records that hold one, narrowed to them.
    private(set) var fill: PullFieldFill?

    static let maxParts = 32
    static let maxBoundLength = 200
    /// The longest `collection` value: a name and a field of 64 each, `:`, `>=` and the bound (the
    /// contract's `maxLength`).
    static let longestPart = 64 + 1 + 64 + 2 + maxBoundLength

    /// The subscription the `collection` values name, back filling `fill` (every collection it
    /// names must be one of them); nil (every collection) when there are neither, as a device
    /// from before subscriptions asks.
    init?(parsing values: [String]?, filling fill: PullFieldFill?) throws(APIError) {
        guard let fill else {
            try self.init(parsing: values)
            return
        }
        guard let values, !values.isEmpty else {
            self.init(parts: fill.collections.map { Part(collection: $0, slice: nil) }, fill: fill)
            return
        }
        try self.init(parsing: values)
        let named = Set(parts.map(\.collection))
        if let outside = fill.collections.first(where: { !named.contains($0) }) {
            throw APIError.badRequest("field names collection '\(outside)', which the pull's collection values do not")
        }
        self.fill = fill
    }

    private init(parts: [Part], fill: PullFieldFill?) {
        self.parts = parts
        self.fill = fill
    }

    /// The subscription the `collection` values name; nil (every collection) when there are none,
    /// as a device from before subscriptions asks.
    init?(parsing values: [String]?) throws(APIError) {
        guard let values, !values.isEmpty else { return nil }
        guard values.count <= Self.maxParts else {
            throw APIError.badRequest("a pull names at most \(Self.maxParts) collections, not \(values.count)")
        }
        parts = try values.map { value throws(APIError) in try Self.part(value) }
        var seen = Set<String>()
        for part in parts where part.slice == nil {
            guard seen.insert(part.collection).inserted else {
                throw APIError.badRequest("collection '\(part.collection)' is named twice")
            }
        }
    }

    private static func part(_ value: String) throws(APIError) -> Part {
        let malformed = APIError.badRequest("collection must be 'name', 'name:field>=value' or 'name:field<value', not '\(value.prefix(60))'")
        guard let colon = value.firstIndex(of: ":") else {
            guard isName(value[...]) else { throw malformed }
            return Part(collection: value, slice: nil)
        }
        let name = value[..<colon]
        let rest = value[value.index(after: colon)...]
        guard isName(name) else { throw malformed }
        let side: Slice.Side, field: Substring, boundText: Substring
        if let range = rest.range(of: ">=") {
            (side, field, boundText) = (.atLeast, rest[..<range.lowerBound], rest[range.upperBound...])
        } else if let index = rest.firstIndex(of: "<") {
            (side, field, boundText) = (.below, rest[..<index], rest[rest.index(after: index)...])
        } else {
            throw malformed
        }
        guard isField(field), !boundText.isEmpty, boundText.unicodeScalars.count <= maxBoundLength,
              !boundText.unicodeScalars.contains(where: { $0.value < 0x20 })
        else { throw malformed }
        let bound: Slice.Bound = Double(boundText).map { $0.isFinite ? .number($0) : .text(String(boundText)) } ?? .text(String(boundText))
        return Part(collection: String(name), slice: Slice(field: String(field), side: side, bound: bound))
    }

    private static func isName(_ text: Substring) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }

    /// A field name safe to put in a JSON path: a letter or `_`, then letters, digits and `_`.
    private static func isField(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, (1...64).contains(text.utf8.count) else { return false }
        let isLetter = { (byte: UInt8) in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
        return isLetter(first) && text.utf8.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The condition a record (`r`) meets to be in the subscription, in `dialect`'s SQL.
    func condition(isPostgres: Bool) -> SQLQueryString {
        let terms: [SQLQueryString] = parts.map { part in
            guard let slice = part.slice else { return "r.collection = \(bind: part.collection)" }
            let atLeast = Self.atLeast(slice, isPostgres: isPostgres)
            return "(r.collection = \(bind: part.collection) AND \(unsafeRaw: slice.side == .atLeast ? "" : "NOT ")\(atLeast))"
        }
        let subscribed: SQLQueryString = "(" + terms.joined(separator: " OR ") + ")"
        return fill.map { subscribed + " AND " + $0.condition(isPostgres: isPostgres) } ?? subscribed
    }

    /// True when the field holds a value of the bound's type at least the bound; false (never
    /// NULL, so that NOT gives the other slice) otherwise.
    private static func atLeast(_ slice: Slice, isPostgres: Bool) -> SQLQueryString {
        // NB: the field name is checked by `isField`: letters, digits and `_` only.
        let field = slice.field
        switch (slice.bound, isPostgres) {
        case (.number(let bound), false):
            return "(CASE WHEN json_type(r.fields, \(bind: "$." + field)) IN ('integer', 'real') THEN json_extract(r.fields, \(bind: "$." + field)) >= \(bind: bound) ELSE 0 END)"
        case (.text(let bound), false):
            return "(CASE WHEN json_type(r.fields, \(bind: "$." + field)) = 'text' THEN json_extract(r.fields, \(bind: "$." + field)) >= \(bind: bound) ELSE 0 END)"
        case (.number(let bound), true):
            return "(CASE WHEN jsonb_typeof(r.fields::jsonb -> \(bind: field)::text) = 'number' THEN (r.fields::jsonb ->> \(bind: field)::text)::float8 >= \(bind: bound) ELSE false END)"
        case (.text(let bound), true):
            return "(CASE WHEN jsonb_typeof(r.fields::jsonb -> \(bind: field)::text) = 'string' THEN (r.fields::jsonb ->> \(bind: field)::text) COLLATE \"C\" >= \(bind: bound)::text COLLATE \"C\" ELSE false END)"
        }
    }
}
