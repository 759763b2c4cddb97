import EventualAPI
import Foundation
import Yams

/// What the contract (`openapi.yaml`) says each operation takes and answers: the range of every
/// number, and the statuses each operation documents. Read once
/// when the server starts, so that `ContractGate` holds every request to the document the server
/// serves, and a new endpoint is held to its own limits without a line of code.
struct ContractLimits: Sendable {
    /// A JSON Schema, as far as limits go: types, ranges, lengths, and where they apply inside.
    final class Schema: Sendable {
        let types: Set<String>
        let minimum: Double?
        let maximum: Double?
        let exclusiveMinimum: Double?
        let exclusiveMaximum: Double?
        /// Read for the tests that hold the contract to the server's own length checks.
        let maxLength: Int?
        let properties: [String: Schema]
        /// Applies to the properties `properties` does not name.
        let additionalProperties: Schema?
        /// Applies to every property (NB: the contract's only property pattern is '', which matches all).
        let everyProperty: Schema?
        let items: Schema?
        /// `oneOf` and `anyOf`: a value meets the schema if it meets one alternative of its type.
        let alternatives: [Schema]
        /// Whether a number anywhere in a value of this schema has a range to meet.
        let boundsNumbers: Bool

        init(types: Set<String>, minimum: Double?, maximum: Double?, exclusiveMinimum: Double?, exclusiveMaximum: Double?,
             maxLength: Int?, properties: [String: Schema], additionalProperties: Schema?,
             everyProperty: Schema?, items: Schema?, alternatives: [Schema]) {
            self.types = types
            self.minimum = minimum
            self.maximum = maximum
            self.exclusiveMinimum = exclusiveMinimum
            self.exclusiveMaximum = exclusiveMaximum
            self.maxLength = maxLength
            self.properties = properties
            self.additionalProperties = additionalProperties
            self.everyProperty = everyProperty
            self.items = items
            self.alternatives = alternatives
            let inner = Array(properties.values) + [additionalProperties, everyProperty, items].compactMap { $0 } + alternatives
            boundsNumbers = [minimum, maximum, exclusiveMinimum, exclusiveMaximum].contains { $0 != nil } || inner.contains(where: \.boundsNumbers)
        }

        /// Whether the schema takes numbers (an integer or a number).
        var isNumeric: Bool { types.contains("integer") || types.contains("number") }
    }

    /// Where a parameter travels.
    enum Location: String, Sendable {
        case path, query, header
    }

    struct Parameter: Sendable {
        let name: String
        let location: Location
        let schema: Schema
    }

    struct Operation: Sendable {
        let id: String
        /// Upper case, as `HTTPRequest.Method` spells it.
        let method: String
        /// The path as the contract writes it (`/v1/attachments/{sha256}`).
        let path: String
        let parameters: [Parameter]
        /// The schema of an `application/json` body, if the operation takes one.
        let jsonBody: Schema?
        /// The statuses its responses list.
        let statuses: Set<Int>
        /// Whether it needs a bearer token (the document's default unless it says `security: []`).
        let signedIn: Bool
    }

    struct ParseError: Error, CustomStringConvertible {
        let description: String
    }

    /// Every operation, by its `operationId`.
    let operations: [String: Operation]
    /// Every operation, by its method and path with its parameters spelled `{}`.
    private let byRoute: [String: Operation]

    /// The contract as the server serves it.
    static func served() throws -> ContractLimits {
        try ContractLimits(document: String(decoding: try Contract.document(), as: UTF8.self))
    }

    init(document: String) throws {
        guard let root = try Yams.compose(yaml: document) else { throw ParseError(description: "the contract is empty") }
        var reader = Reader(root: root)
        let defaultSecurity = (root["security"]?.sequence?.count ?? 0) > 0
        var operations: [String: Operation] = [:]
        for (pathKey, item) in root["paths"]?.mapping ?? [:] {
            guard let path = pathKey.string, let item = try reader.resolve(item).mapping else { continue }
            let shared = try (item["parameters"]?.sequence.map(Array.init) ?? []).map { try reader.parameter($0) }
            for (methodKey, operationNode) in item {
                guard let method = methodKey.string, Reader.methods.contains(method) else { continue }
                guard let id = operationNode["operationId"]?.string else {
                    throw ParseError(description: "\(method.uppercased()) \(path) has no operationId")
                }
                let own = try (operationNode["parameters"]?.sequence.map(Array.init) ?? []).map { try reader.parameter($0) }
                var body: Schema?
                if let requestBody = operationNode["requestBody"],
                   let schema = try reader.resolve(requestBody)["content"]?["application/json"]?["schema"] {
                    body = try reader.schema(schema)
                }
                let statuses = Set((operationNode["responses"]?.mapping.map { Array($0.keys) } ?? []).compactMap { $0.string.flatMap(Int.init) })
                let security = operationNode["security"]?.sequence.map { $0.count > 0 } ?? defaultSecurity
                operations[id] = Operation(id: id, method: method.uppercased(), path: path,
                                           parameters: own + shared.filter { parameter in !own.contains { $0.name == parameter.name } },
                                           jsonBody: body, statuses: statuses, signedIn: security)
            }
        }
        self.operations = operations
        byRoute = Dictionary(operations.values.map { (Self.routeKey($0.method, $0.path), $0) }) { first, _ in first }
    }

    /// The operation a routed request reached: `path` is the route as the router spells it
    /// (`/v1/attachments/:sha256` or `{sha256}`).
    func operation(method: String, route path: String) -> Operation? {
        byRoute[Self.routeKey(method, path)]
    }

    /// A method and a path's segments with every parameter spelled `{}`.
    private static func routeKey(_ method: String, _ path: String) -> String {
        method + " " + path.split(separator: "/").map { $0.hasPrefix(":") || $0.hasPrefix("{") ? "{}" : String($0) }.joined(separator: "/")
    }
}

/// Walks the YAML document, following `$ref`s.
private struct Reader {
    static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
    /// NB: the contract has no recursive schema; this only stops a future one from looping.
    static let deepest = 64

    let root: Node
    private var depth = 0

    init(root: Node) {
        self.root = root
    }

    /// `node`, or what its `$ref` points to (`#/components/...`).
    func resolve(_ node: Node) throws -> Node {
        var node = node
        var hops = 0
        while let reference = node["$ref"]?.string {
            guard reference.hasPrefix("#/"), hops < Self.deepest else {
                throw ContractLimits.ParseError(description: "the reference \(reference) cannot be followed")
            }
            var target: Node? = root
            for part in reference.dropFirst(2).split(separator: "/") { target = target?[String(part)] }
            guard let found = target else { throw ContractLimits.ParseError(description: "the reference \(reference) points nowhere") }
            node = found
            hops += 1
        }
        return node
    }

    mutating func parameter(_ node: Node) throws -> ContractLimits.Parameter {
        let node = try resolve(node)
        guard let name = node["name"]?.string, let location = node["in"]?.string.flatMap(ContractLimits.Location.init(rawValue:)),
              let schema = node["schema"]
        else { throw ContractLimits.ParseError(description: "a parameter lacks its name, its place or its schema") }
        return ContractLimits.Parameter(name: name, location: location, schema: try self.schema(schema))
    }

    mutating func schema(_ node: Node) throws -> ContractLimits.Schema {
        let node = try resolve(node)
        depth += 1
        defer { depth -= 1 }
        guard depth < Self.deepest else { throw ContractLimits.ParseError(description: "a schema nests deeper than \(Self.deepest)") }
        var types: Set<String> = []
        if let type = node["type"] {
            if let one = type.string { types = [one] } else { types = Set((type.sequence.map(Array.init) ?? []).compactMap(\.string)) }
        }
        func number(_ key: String) -> Double? { node[key]?.string.flatMap(Double.init) }
        func whole(_ key: String) -> Int? { node[key]?.string.flatMap { Int($0) } }
        var properties: [String: ContractLimits.Schema] = [:]
        for (key, value) in node["properties"]?.mapping ?? [:] {
            guard let name = key.string else { continue }
            properties[name] = try schema(value)
        }
        // NB: `additionalProperties: true` (or false) sets no limit on the values.
        let additional = try node["additionalProperties"].flatMap { $0.mapping == nil ? nil : try schema($0) }
        let every = try node["patternProperties"]?.mapping?.first.map { try schema($0.value) }
        let alternatives = try ((node["oneOf"]?.sequence.map(Array.init) ?? []) + (node["anyOf"]?.sequence.map(Array.init) ?? []))
            .map { try schema($0) }
        return ContractLimits.Schema(
            types: types, minimum: number("minimum"), maximum: number("maximum"),
            exclusiveMinimum: number("exclusiveMinimum"), exclusiveMaximum: number("exclusiveMaximum"),
            maxLength: whole("maxLength"),
            properties: properties, additionalProperties: additional, everyProperty: every,
            items: try node["items"].map { try schema($0) }, alternatives: alternatives)
    }
}
