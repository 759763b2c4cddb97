import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Holds every request to the ranges its operation states in the contract, before the request is
/// decoded and before any handler runs: each number of the parameters and of a JSON body within
/// its range, and each header parameter printable ASCII. A request outside them is a 400 naming
/// the field and the limit, so no handler ever sees a number the contract does not allow (an
/// offset near `Int64.max`, a size of 1e308).
///
/// NB: values the contract's types do not fit (a word where a number goes, a body that is not
/// JSON) pass through untouched: the generated decoder refuses them with its own message.
struct ContractGate: ServerMiddleware {
    let limits: ContractLimits
    /// The most bytes of a JSON body read here (the edge has refused larger bodies already).
    var maxBodyBytes = 64 * 1024 * 1024

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let operation = limits.operations[operationID] else { return try await next(request, body, metadata) }
        try Self.checkParameters(of: operation, request: request, pathParameters: metadata.pathParameters)
        guard let schema = operation.jsonBody, schema.boundsNumbers, let body,
              request.headerFields[.contentType]?.lowercased().contains("json") ?? true
        else { return try await next(request, body, metadata) }
        let bytes = try await Data(collecting: body, upTo: maxBodyBytes)
        // NB: a walk over the bytes that reads only the numbers, not a second decode of the body.
        if let problem = ContractWalk.problem(in: bytes, against: schema) { throw APIError.badRequest(problem) }
        return try await next(request, HTTPBody(bytes), metadata)
    }

    /// Throws a 400 for the first parameter outside its limits.
    static func checkParameters(of operation: ContractLimits.Operation, request: HTTPRequest,
                                pathParameters: [String: Substring]) throws(APIError) {
        let query = queryItems(of: request.path ?? "")
        for parameter in operation.parameters {
            let values: [String]
            switch parameter.location {
            case .path:
                values = pathParameters[parameter.name].map { [String($0).removingPercentEncoding ?? String($0)] } ?? []
            case .query:
                values = query.filter { $0.name == parameter.name }.map(\.value)
            case .header:
                guard let name = HTTPField.Name(parameter.name) else { continue }
                values = request.headerFields[fields: name].map(\.value)
                // NB: a header parameter is printable ASCII, as the contract's patterns say. A byte past
                // ASCII reaches here decoded as UTF-8, or as U+FFFD when it is none (a C1 control byte
                // and a Latin-1 letter sent raw both are), so that the two cannot be told apart: both go.
                if values.contains(where: { $0.unicodeScalars.contains { !(0x20...0x7E).contains($0.value) } }) {
                    throw .badRequest("\(parameter.name) must be printable ASCII (no control character, and no byte past ASCII)")
                }
            }
            let schema = parameter.schema.items ?? parameter.schema
            for value in values {
                if let problem = ContractCheck.problem(withParameter: value, against: schema, named: parameter.name) {
                    throw .badRequest(problem)
                }
            }
        }
    }

    /// The query's name and value pairs, percent-decoded.
    static func queryItems(of path: String) -> [(name: String, value: String)] {
        guard let start = path.firstIndex(of: "?") else { return [] }
        return path[path.index(after: start)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in String(text).removingPercentEncoding ?? String(text) }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}

/// A JSON value as it came, numbers apart from their types, to check against a schema: what
/// `ContractWalk` decodes a value with `oneOf` or `anyOf` into, and the tests' reference.
enum JSONValue: Decodable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let whole = try? container.decode(Int64.self) {
            self = .integer(whole)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let object = try? container.decode([String: JSONValue].self) {
            self = .object(object)
        } else {
            self = .array(try container.decode([JSONValue].self))
        }
    }
}

/// Whether a value meets a schema's limits, and if not, the sentence that says why.
enum ContractCheck {
    /// The first limit `value` breaks, naming where it is (`changes[2].deltas.quantity`); nil when
    /// it meets them all, or when it is not of the schema's type (the decoder says so).
    static func problem(with value: JSONValue, against schema: ContractLimits.Schema, at path: String) -> String? {
        guard schema.boundsNumbers || !schema.alternatives.isEmpty else { return nil }
        if !schema.alternatives.isEmpty {
            let fitting = schema.alternatives.filter { fits(value, $0) }
            let problems = fitting.map { problem(with: value, against: $0, at: path) }
            if !problems.isEmpty, !problems.contains(where: { $0 == nil }) { return problems.first ?? nil }
        }
        switch value {
        case .integer(let whole):
            return problem(with: Double(whole), shown: String(whole), against: schema, at: path)
        case .number(let number):
            return problem(with: number, shown: "\(number)", against: schema, at: path)
        case .object(let object):
            for key in object.keys.sorted() {
                guard let inner = object[key] else { continue }
                let place = path.isEmpty ? key : "\(path).\(key)"
                for child in [schema.properties[key] ?? schema.additionalProperties, schema.everyProperty].compactMap({ $0 }) {
                    if let found = problem(with: inner, against: child, at: place) { return found }
                }
            }
            return nil
        case .array(let items):
            guard let itemSchema = schema.items else { return nil }
            for (index, item) in items.enumerated() {
                if let found = problem(with: item, against: itemSchema, at: "\(path)[\(index)]") { return found }
            }
            return nil
        case .null, .bool, .string:
            return nil
        }
    }

    /// The range a parameter's number breaks, if it is a number. NB: a parameter's text is held to
    /// its length and pattern by its handler, whose message says what the text is for ("64
    /// lowercase hex digits") where a pattern can only be quoted.
    static func problem(withParameter text: String, against schema: ContractLimits.Schema, named name: String) -> String? {
        guard schema.isNumeric else { return nil }
        let shown = text.count > 40 ? "\(text.prefix(40))…" : text
        if !schema.types.contains("number") {
            // NB: digits too many for Int64 are still a whole number, out of any range the contract states.
            let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
            guard !digits.isEmpty, digits.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else {
                return "\(name) must be a whole number, not '\(shown)'"
            }
            return problem(with: Int64(text).map(Double.init) ?? (text.hasPrefix("-") ? -.infinity : .infinity), shown: shown,
                           against: schema, at: name, finite: false)
        }
        guard let number = Double(text), !text.lowercased().hasPrefix("0x"), !text.lowercased().hasPrefix("-0x") else {
            return "\(name) must be a number, not '\(shown)'"
        }
        return problem(with: number, shown: shown, against: schema, at: name)
    }

    static func problem(with number: Double, shown: String, against schema: ContractLimits.Schema, at path: String,
                        finite: Bool = true) -> String? {
        let name = path.isEmpty ? "the body" : path
        guard number.isFinite || !finite else { return "\(name) must be a finite number, not \(shown)" }
        if let maximum = schema.maximum, number > maximum { return "\(name) must be at most \(format(maximum)), not \(shown)" }
        if let minimum = schema.minimum, number < minimum { return "\(name) must be at least \(format(minimum)), not \(shown)" }
        if let bound = schema.exclusiveMaximum, number >= bound { return "\(name) must be less than \(format(bound)), not \(shown)" }
        if let bound = schema.exclusiveMinimum, number <= bound { return "\(name) must be more than \(format(bound)), not \(shown)" }
        return nil
    }

    /// Whether `value` is of a type the schema takes (a schema that names none takes any).
    private static func fits(_ value: JSONValue, _ schema: ContractLimits.Schema) -> Bool {
        guard !schema.types.isEmpty else { return true }
        switch value {
        case .null: return schema.types.contains("null")
        case .bool: return schema.types.contains("boolean")
        case .integer, .number: return schema.isNumeric
        case .string: return schema.types.contains("string")
        case .array: return schema.types.contains("array")
        case .object: return schema.types.contains("object")
        }
    }

    /// A bound as people write it: 20971520, not 20971520.0.
    static func format(_ bound: Double) -> String {
        if let whole = Int64(exactly: bound) { return String(whole) }
        return "\(bound)"
    }
}
