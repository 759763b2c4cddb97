import EventualAPI
import Foundation
import HTTPTypes
import NIOCore
import Testing
@testable import EventualServer

/// Every number the contract accepts, at its extremes, against every operation: generated from
/// `openapi.yaml`, so a new endpoint is covered without anyone writing a test.
@Suite("The contract's numbers at their extremes: a 4xx with the JSON error, never a stop", .timeLimit(.minutes(5)))
struct ContractExtremesTests {
    /// The largest magnitude a bound may have and still be compared exactly as a Double.
    static let exactLimit = 9_007_199_254_740_991.0

    @Test func everyIntegerAndNumberTheContractTakesHasARange() throws {
        // Given the served contract
        let contract = try ContractLimits.served()
        // When every numeric schema of every operation's parameters and body is listed
        let numbers = contract.operations.values.flatMap { NumericField.all(in: $0) }
        #expect(numbers.count >= 20, "the walk found too few numbers to be reading the document: \(numbers.count)")
        // Then each states a lower and an upper bound, within what a Double holds exactly
        for field in numbers {
            let schema = field.schema
            #expect(schema.minimum != nil || schema.exclusiveMinimum != nil, "\(field.operation) \(field.name) has no lower bound")
            #expect(schema.maximum != nil || schema.exclusiveMaximum != nil, "\(field.operation) \(field.name) has no upper bound")
            for bound in [schema.minimum, schema.maximum, schema.exclusiveMinimum, schema.exclusiveMaximum].compactMap({ $0 }) {
                #expect(bound.magnitude <= Self.exactLimit, "\(field.operation) \(field.name): \(bound) is past 2^53 - 1")
            }
        }
    }

    @Test func everyNumberInTheDocumentHasARange() throws {
        // NB: answers too: a client reads them, and a range says what it must be ready for.
        let text = String(decoding: try Contract.document(), as: UTF8.self)
        var unbounded: [String] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where line.contains("type: integer") || line.contains("type: number") || line.contains("[integer") || line.contains("[number") {
            // NB: in this document a numeric schema is written on one line, or its bounds follow on the next two.
            let following = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(index).prefix(3).joined()
            if !(following.contains("minimum") && following.contains("maximum")) { unbounded.append("line \(index + 1): \(line)") }
        }
        #expect(unbounded.isEmpty, "\(unbounded.joined(separator: "\n"))")
    }

    @Test(arguments: Backend.available)
    func everyExtremeIsA4xxWithTheErrorShapeAndTheServerLivesOn(_ backend: Backend) async throws {
        let contract = try ContractLimits.served()
        try await withServer(backend, mode: .live) { api in
            let account = try await api.signUp("extremes")
            var covered = Set<String>(), sent = 0, undocumented: [String] = []
            for operation in contract.operations.values.sorted(by: { $0.id < $1.id }) {
                for field in NumericField.all(in: operation) {
                    covered.insert(operation.id)
                    for value in field.extremes {
                        for signedIn in [true, false] {
                            // Given a request whose one number is an extreme
                            let request = field.request(with: value, signedIn: signedIn ? account.bearer : [:])
                            // When it is sent
                            let answer = try await api.send(request.method, request.uri, headers: request.headers, json: request.json)
                            sent += 1
                            let what = "\(operation.id) \(field.name)=\(value.text) (\(signedIn ? "signed in" : "anonymous"))"
                            // Then it is never a server failure
                            #expect(answer.status.code < 500, "\(what): \(answer.status.code) \(answer.text.prefix(300))")
                            // And a value outside its range is a 400 that names the field
                            if !value.inRange {
                                #expect(answer.status == .badRequest, "\(what): \(answer.status.code) \(answer.text.prefix(300))")
                                if answer.status == .badRequest, let error = try? answer.error() {
                                    #expect(error.message.contains(field.shortName), "\(what): \(error.message)")
                                }
                            } else if answer.status.code >= 400 {
                                #expect((try? answer.error()) != nil, "\(what): \(answer.text.prefix(300))")
                            }
                            // And the status is one the operation documents
                            if !operation.statuses.contains(Int(answer.status.code)), answer.status.code != 503 {
                                undocumented.append("\(operation.id) \(answer.status.code)")
                            }
                        }
                    }
                    // And the server still answers
                    #expect(try await api.send(.get, "/health").status == .ok, "after \(operation.id) \(field.name)")
                }
            }
            #expect(Set(undocumented).isEmpty, "statuses the contract does not document: \(Set(undocumented).sorted())")
            let expected = contract.operations.values.filter { !NumericField.all(in: $0).isEmpty }.count
            #expect(covered.count == expected && expected >= 10, "covered \(covered.count) of \(expected) operations")
            #expect(sent > 300, "sent \(sent)")
            print("extremes: \(covered.count) operations, \(sent) requests, undocumented \(Set(undocumented).sorted())")
        }
    }
}

/// Every operation answers only statuses its contract lists (503 aside, which any call may answer).
@Suite("Every operation answers only the statuses its contract lists", .timeLimit(.minutes(5)))
struct ContractStatusTests {
    @Test(arguments: Backend.available)
    func plainMalformedAndAnonymousRequestsGetDocumentedStatuses(_ backend: Backend) async throws {
        let contract = try ContractLimits.served()
        try await withServer(backend, mode: .live) { api in
            let account = try await api.signUp("statuses")
            var undocumented: [String] = [], sent = 0
            for operation in contract.operations.values.sorted(by: { $0.id < $1.id }) {
                let plain = NumericField.plainRequest(to: operation)
                var tries: [(String, HTTPFields, String?)] = [
                    ("signed in", account.bearer, plain.json),
                    ("anonymous", [:], plain.json),
                    ("a revoked-looking token", [.authorization: "Bearer not-a-token"], plain.json),
                ]
                if operation.jsonBody != nil {
                    tries.append(("malformed JSON", account.bearer, "{\"oops\":"))
                    tries.append(("an empty object", account.bearer, "{}"))
                    tries.append(("an array", account.bearer, "[]"))
                }
                var answers: [(String, Answer)] = []
                for (what, headers, json) in tries {
                    // When the operation is called so
                    answers.append((what, try await api.send(plain.method, plain.uri, headers: headers, json: json)))
                }
                for header in operation.parameters where header.location == .header {
                    // A header parameter holding a byte past ASCII (a C1 control character in UTF-8)
                    var headers = account.bearer
                    headers.append(HTTPField(name: HTTPField.Name(header.name)!, value: [0x61, 0xC2, 0x84]))
                    answers.append(("\(header.name) past ASCII", try await api.send(plain.method, plain.uri, headers: headers, json: plain.json)))
                }
                if let json = plain.json {
                    var headers = account.bearer
                    headers[.contentType] = "text/plain"
                    let answer = try await api.client.execute(uri: plain.uri, method: plain.method, headers: headers,
                                                              body: ByteBuffer(string: json)) { response in
                        Answer(status: response.status, headers: response.headers, body: response.body)
                    }
                    answers.append(("a body that says it is text", answer))
                }
                for (what, answer) in answers {
                    sent += 1
                    // Then the answer is no server failure, an error has the JSON shape, and its status is listed
                    #expect(answer.status.code < 500, "\(operation.id), \(what): \(answer.status.code) \(answer.text.prefix(300))")
                    if answer.status.code >= 400 { #expect((try? answer.error()) != nil, "\(operation.id), \(what): \(answer.text.prefix(300))") }
                    if !operation.statuses.contains(Int(answer.status.code)), answer.status.code != 503 {
                        undocumented.append("\(operation.id) \(answer.status.code) (\(what))")
                    }
                }
            }
            #expect(undocumented.isEmpty, "\(undocumented.joined(separator: "\n"))")
            #expect(sent >= contract.operations.count * 3)
            print("statuses: \(contract.operations.count) operations, \(sent) requests, undocumented \(undocumented.count)")
        }
    }
}

/// One number an operation takes: a parameter, or a place inside its JSON body.
struct NumericField: Sendable {
    let operation: String
    /// As a 400 names it: `offset`, `changes[0].deltas.quantity`.
    let name: String
    let schema: ContractLimits.Schema
    private let location: Location
    private let base: ContractLimits.Operation

    private enum Location: Sendable {
        case parameter(ContractLimits.Parameter)
        /// The keys and indices that lead to the number in a body built from the schema.
        case body([Step])
    }

    enum Step: Sendable, Equatable {
        case key(String)
        case index
    }

    /// The last part of the name, which every message about the field holds.
    var shortName: String {
        String(name.split(separator: ".").last ?? Substring(name))
    }

    /// A value to send, as JSON or query text, and whether the contract allows it.
    struct Value: Sendable {
        let text: String
        let inRange: Bool
    }

    /// 0, -1, Int64's ends, ±1e308, and one past each bound.
    var extremes: [Value] {
        var values: [(String, Double)] = [("0", 0), ("-1", -1), ("9223372036854775807", 9.223372036854775807e18),
                                          ("-9223372036854775808", -9.223372036854775808e18), ("1e308", 1e308), ("-1e308", -1e308)]
        if let maximum = schema.maximum { values.append((ContractCheck.format(maximum + 1), maximum + 1)) }
        if let minimum = schema.minimum { values.append((ContractCheck.format(minimum - 1), minimum - 1)) }
        if let maximum = schema.maximum { values.append((ContractCheck.format(maximum), maximum)) }
        if let minimum = schema.minimum { values.append((ContractCheck.format(minimum), minimum)) }
        return values.map { text, number in
            let inRange = (schema.minimum.map { number >= $0 } ?? true) && (schema.maximum.map { number <= $0 } ?? true)
                && (schema.exclusiveMinimum.map { number > $0 } ?? true) && (schema.exclusiveMaximum.map { number < $0 } ?? true)
            return Value(text: text, inRange: inRange)
        }
    }

    struct Request {
        let method: HTTPRequest.Method
        let uri: String
        let headers: HTTPFields
        let json: String?
    }

    /// A request to the operation whose one number is `value`, the rest as plain as the schema allows.
    func request(with value: Value, signedIn headers: HTTPFields) -> Request {
        var query: [String] = []
        var path = base.path
        for parameter in base.parameters where parameter.location == .path {
            path = path.replacingOccurrences(of: "{\(parameter.name)}", with: Self.pathSample(parameter.name))
        }
        var json: String?
        switch location {
        case .parameter(let parameter):
            if parameter.location == .path {
                path = base.path.replacingOccurrences(of: "{\(parameter.name)}", with: value.text)
                for other in base.parameters where other.location == .path && other.name != parameter.name {
                    path = path.replacingOccurrences(of: "{\(other.name)}", with: Self.pathSample(other.name))
                }
            } else {
                query.append("\(parameter.name)=\(value.text)")
            }
            if let body = base.jsonBody { json = Self.render(Self.sample(body), replacing: [], with: "") }
        case .body(let steps):
            json = Self.render(Self.sample(base.jsonBody!, along: steps), replacing: steps, with: value.text)
        }
        // NB: operations that read a place need one (`near` for the offers and the points).
        if base.parameters.contains(where: { $0.name == "near" && $0.location == .query }) { query.append("near=47.8,13.04") }
        let uri = query.isEmpty ? path : path + "?" + query.joined(separator: "&")
        return Request(method: HTTPRequest.Method(base.method)!, uri: uri, headers: headers, json: json)
    }

    /// A request to `operation` with every number at its least, the rest as plain as the schema allows.
    static func plainRequest(to operation: ContractLimits.Operation) -> Request {
        var path = operation.path
        for parameter in operation.parameters where parameter.location == .path {
            path = path.replacingOccurrences(of: "{\(parameter.name)}", with: pathSample(parameter.name))
        }
        let near = operation.parameters.contains { $0.name == "near" && $0.location == .query }
        return Request(method: HTTPRequest.Method(operation.method)!, uri: near ? path + "?near=47.8,13.04" : path, headers: [:],
                       json: operation.jsonBody.map { render(sample($0), replacing: [], with: "") })
    }

    /// Every number `operation` takes.
    static func all(in operation: ContractLimits.Operation) -> [NumericField] {
        var found: [NumericField] = []
        for parameter in operation.parameters where parameter.schema.isNumeric {
            found.append(NumericField(operation: operation.id, name: parameter.name, schema: parameter.schema,
                                      location: .parameter(parameter), base: operation))
        }
        if let body = operation.jsonBody {
            for (steps, schema) in numbers(in: body, along: []) {
                found.append(NumericField(operation: operation.id, name: describe(steps), schema: schema, location: .body(steps), base: operation))
            }
        }
        return found
    }

    private static func numbers(in schema: ContractLimits.Schema, along steps: [Step], depth: Int = 0) -> [([Step], ContractLimits.Schema)] {
        guard depth < 8 else { return [] }
        var found: [([Step], ContractLimits.Schema)] = []
        if schema.isNumeric { found.append((steps, schema)) }
        for (key, inner) in schema.properties.sorted(by: { $0.key < $1.key }) {
            found += numbers(in: inner, along: steps + [.key(key)], depth: depth + 1)
        }
        if let inner = schema.additionalProperties { found += numbers(in: inner, along: steps + [.key("k")], depth: depth + 1) }
        if let inner = schema.everyProperty, inner.boundsNumbers, schema.additionalProperties == nil {
            found.append((steps + [.key("k")], inner))
        }
        if let inner = schema.items { found += numbers(in: inner, along: steps + [.index], depth: depth + 1) }
        return found
    }

    private static func describe(_ steps: [Step]) -> String {
        steps.reduce("") { name, step in
            switch step {
            case .key(let key): return name.isEmpty ? key : "\(name).\(key)"
            case .index: return "\(name)[0]"
            }
        }
    }

    private static func pathSample(_ name: String) -> String {
        switch name {
        case "sha256": return String(repeating: "a", count: 64)
        case "barcode": return "4006381333931"
        default: return "sample-\(name)"
        }
    }

    /// A JSON value of `schema`, plain enough for most rules: the first enum value, "x", false, the
    /// least number allowed; with the objects and arrays `steps` passes through.
    private indirect enum Sample {
        case literal(String)
        case object([(String, Sample)])
        case array([Sample])
    }

    private static func sample(_ schema: ContractLimits.Schema, along steps: [Step] = [], depth: Int = 0) -> Sample {
        let next = steps.first, rest = Array(steps.dropFirst())
        if schema.isNumeric { return .literal(ContractCheck.format(schema.minimum ?? schema.exclusiveMinimum.map { $0 + 1 } ?? 0)) }
        if schema.types.contains("object") || !schema.properties.isEmpty || next.map({ if case .key = $0 { true } else { false } }) == true {
            var members: [(String, Sample)] = []
            for (key, inner) in schema.properties.sorted(by: { $0.key < $1.key }) where depth < 6 {
                members.append((key, sample(inner, along: next == .key(key) ? rest : [], depth: depth + 1)))
            }
            if case .key(let key)? = next, schema.properties[key] == nil {
                let inner = schema.additionalProperties ?? schema.everyProperty
                members.append((key, inner.map { sample($0, along: rest, depth: depth + 1) } ?? .literal("0")))
            }
            return .object(members)
        }
        if schema.types.contains("array") {
            guard next == .index, let items = schema.items else { return .array([]) }
            return .array([sample(items, along: rest, depth: depth + 1)])
        }
        if schema.types.contains("boolean") { return .literal("false") }
        if schema.types.contains("string") { return .literal("\"x\"") }
        return .literal("null")
    }

    /// The sample as JSON text, with the number at `steps` replaced by `value`.
    private static func render(_ sample: Sample, replacing steps: [Step], with value: String) -> String {
        switch sample {
        case .literal(let text):
            return steps.isEmpty && !value.isEmpty ? value : text
        case .object(let members):
            let parts = members.map { key, inner -> String in
                let down: [Step]? = steps.first == .key(key) ? Array(steps.dropFirst()) : nil
                return jsonString(key) + ":" + render(inner, replacing: down ?? [], with: down == nil ? "" : value)
            }
            return "{" + parts.joined(separator: ",") + "}"
        case .array(let items):
            let down: [Step]? = steps.first == .index ? Array(steps.dropFirst()) : nil
            return "[" + items.map { render($0, replacing: down ?? [], with: down == nil ? "" : value) }.joined(separator: ",") + "]"
        }
    }
}
