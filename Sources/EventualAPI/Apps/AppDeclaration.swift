import Foundation
import Yams

/// An app as a file declares it: its id and title, whether it needs a verified email, and its
/// synced collections with their scope, typed fields and rules. YAML (JSON is YAML too):
///
/// ```yaml
/// id: chores
/// title: Chores
/// collections:
///   - name: chores
///     scope: space
///     fields:
///       title: { type: string, nullable: false, maxLength: 200 }
///       due: { type: date }
///       done: { type: boolean, nullable: false }
///     rules:
///       - oneOf: { field: size, allowed: [small, large] }
/// ```
///
/// `AppDeclaration.read` answers the app, or every mistake in the file, each with its line and
/// its place (`collections[0].fields.title.type`). docs/app-declaration.schema.json is its schema.
public struct AppDeclaration: Sendable, Equatable {
    public let app: EventualApp

    /// The limits a declaration is held to: past them a file is a mistake, not an app.
    public enum Limits {
        public static let fileBytes = 1 << 20
        public static let collections = 64
        public static let fieldsPerCollection = 256
        public static let rulesPerCollection = 64
        public static let maxLength = 1_000_000
        public static let allowedValues = 100
        public static let titleCharacters = 60
        public static let version = 1_000_000
    }

    /// The names a field may not take: the columns the engine adds to every mirrored table, and
    /// SQLite's names for a row's own id.
    public static let engineColumns: Set<String> = ["id", "space_id", "changed_by", "rowid", "oid", "_rowid_"]

    /// Whether `text` has an app id's shape: a lowercase letter, then up to 31 lowercase
    /// letters, digits or `_` (the contract's `AppName`).
    public static func isAppID(_ text: String) -> Bool {
        DeclarationReader.identifier.matches(text)
    }

    /// Reads a declaration. `owners` names the app that owns each collection already deployed
    /// (a collection another app owns is a mistake); the app's own are allowed, for a redeploy.
    public static func read(_ text: String, owners: [String: String] = [:]) -> Result<AppDeclaration, DeclarationProblems> {
        var reader = DeclarationReader(owners: owners)
        guard text.utf8.count <= Limits.fileBytes else {
            return .failure(DeclarationProblems([DeclarationProblem(line: nil, place: "the file",
                message: "is \(text.utf8.count / 1024) KiB: a declaration is at most \(Limits.fileBytes / 1024) KiB")]))
        }
        if let index = text.unicodeScalars.firstIndex(where: { $0.value == 0 }) {
            let line = text.unicodeScalars[..<index].filter { $0 == "\n" }.count + 1
            return .failure(DeclarationProblems([DeclarationProblem(line: line, place: "the file", message: "holds a NUL byte")]))
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch YamlError.duplicatedKeysInMapping(let duplicates, let context) {
            // NB: the YAML reader stops at a key given twice, so this is the file's one mistake said.
            let keys = duplicates.sorted().map { "'\($0)'" }.joined(separator: ", ")
            return .failure(DeclarationProblems([DeclarationProblem(line: context.mark.line, place: "the mapping that starts here",
                                                                    message: "gives \(keys) twice: give each key once")]))
        } catch let error as YamlError {
            return .failure(DeclarationProblems([DeclarationProblem(line: Self.line(of: error), place: "the file", message: "is not YAML: \(Self.words(of: error))")]))
        } catch {
            return .failure(DeclarationProblems([DeclarationProblem(line: nil, place: "the file", message: "is not YAML")]))
        }
        guard let root else { return .failure(DeclarationProblems([DeclarationProblem(line: 1, place: "the file", message: "is empty")])) }
        let app = reader.app(root)
        if let app, reader.problems.isEmpty { return .success(AppDeclaration(app: app)) }
        return .failure(DeclarationProblems(reader.problems))
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): return mark.line
        default: return nil
        }
    }

    private static func words(of error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _), .composer(_, let problem, _, _): return problem
        default: return "it cannot be read"
        }
    }
}

/// One mistake in a declaration: where it is and what is wrong, in a line.
public struct DeclarationProblem: Sendable, Equatable, CustomStringConvertible {
    /// The line in the file (from 1), when known.
    public let line: Int?
    /// Where in the declaration: `collections[1].fields.name.maxLength`.
    public let place: String
    public let message: String

    public var description: String { (line.map { "line \($0): " } ?? "") + "\(place) \(message)" }
}

/// Every mistake a declaration holds, in the file's order.
public struct DeclarationProblems: Error, Sendable, Equatable, CustomStringConvertible {
    public let problems: [DeclarationProblem]

    init(_ problems: [DeclarationProblem]) { self.problems = problems }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// Walks a declaration's YAML, keeping every mistake it meets rather than stopping at the first.
private struct DeclarationReader {
    let owners: [String: String]
    var problems: [DeclarationProblem] = []

    /// A name's shape: a letter, then letters, digits or `_`, at most `length` in all; lowercase
    /// only unless `mixedCase`. NB: ASCII only: a name becomes a table's or a column's.
    struct NameShape: Sendable {
        let length: Int
        var mixedCase = false

        func matches(_ text: String) -> Bool {
            let scalars = Array(text.unicodeScalars)
            guard let first = scalars.first, scalars.count <= length, isLetter(first) else { return false }
            return scalars.dropFirst().allSatisfy { isLetter($0) || ("0"..."9").contains($0) || $0 == "_" }
        }

        private func isLetter(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || (mixedCase && ("A"..."Z").contains(scalar))
        }
    }

    static let identifier = NameShape(length: 32)
    private static let collectionName = NameShape(length: 64)
    private static let fieldName = NameShape(length: 64, mixedCase: true)

    init(owners: [String: String]) { self.owners = owners }

    mutating func problem(_ node: Node?, _ place: String, _ message: String) {
        problems.append(DeclarationProblem(line: node?.mark?.line, place: place, message: message))
    }

    /// The pairs of a mapping by key, each key once; nil (and a problem) when it is no mapping.
    /// A key that is not one of `known` (the keys of `noun`, "a field") is a mistake, and so is a
    /// key given twice.
    mutating func mapping(_ node: Node, _ place: String, known: Set<String>? = nil, of noun: String = "") -> [String: Node]? {
        guard let mapping = node.mapping else {
            problem(node, place, "must be a mapping of keys to values")
            return nil
        }
        var pairs: [String: Node] = [:]
        for (key, value) in mapping {
            guard let name = key.string else {
                problem(key, place, "has a key that is not a name")
                continue
            }
            if pairs[name] != nil {
                problem(key, "\(place).\(name)", "is given twice")
                continue
            }
            if let known, !known.contains(name) {
                problem(key, "\(place).\(name)", "is not a key of \(noun): use \(known.sorted().joined(separator: ", "))")
                continue
            }
            pairs[name] = value
        }
        return pairs
    }

    mutating func string(_ node: Node?, _ place: String, required: Bool = true) -> String? {
        guard let node else {
            if required { problem(nil, place, "is missing") }
            return nil
        }
        guard let scalar = node.scalar, node.sequence == nil else {
            problem(node, place, "must be a text")
            return nil
        }
        if scalar.string.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            problem(node, place, "holds a control character")
            return nil
        }
        return scalar.string
    }

    mutating func bool(_ node: Node?, _ place: String, default value: Bool) -> Bool {
        guard let node else { return value }
        guard node.scalar != nil, let bool = node.bool else {
            problem(node, place, "must be true or false")
            return value
        }
        return bool
    }

    mutating func name(_ node: Node?, _ place: String, _ shape: NameShape, _ kind: String) -> String? {
        guard let text = string(node, place) else { return nil }
        guard shape.matches(text) else {
            let shown = text.count > 40 ? text.prefix(40) + "…" : Substring(text)
            problem(node, place, "'\(shown)' is not \(kind)")
            return nil
        }
        return text
    }

    // MARK: - The declaration

    mutating func app(_ root: Node) -> EventualApp? {
        let place = "the declaration"
        guard let keys = mapping(root, place, known: ["id", "title", "version", "minimumVersion", "verifiedEmail", "verifyCommand", "collections"],
                                 of: "a declaration") else { return nil }
        let id = name(keys["id"], "id", Self.identifier, "an app id: a lowercase letter, then up to 31 lowercase letters, digits or _")
        var title = string(keys["title"], "title")
        if let text = title, text.trimmingCharacters(in: .whitespaces).isEmpty || text.count > AppDeclaration.Limits.titleCharacters {
            problem(keys["title"], "title", "must be 1 to \(AppDeclaration.Limits.titleCharacters) characters")
            title = nil
        }
        var version = 1, versionRead = true
        if let node = keys["version"] {
            if node.scalar != nil, node.bool == nil, let number = node.int, (1...AppDeclaration.Limits.version).contains(number) {
                version = number
            } else {
                problem(node, "version", "must be a whole number from 1 to \(AppDeclaration.Limits.version)")
                versionRead = false
            }
        }
        var minimumVersion = 1
        // NB: against a version that did not read, the minimum has nothing to be held to: one mistake, not two.
        if let node = keys["minimumVersion"], versionRead {
            if node.scalar != nil, node.bool == nil, let number = node.int, (1...version).contains(number) {
                minimumVersion = number
            } else {
                problem(node, "minimumVersion", "must be a whole number from 1 to the version, \(version)")
            }
        }
        let verified = bool(keys["verifiedEmail"], "verifiedEmail", default: false)
        let verify = string(keys["verifyCommand"], "verifyCommand", required: false)
        var collections: [SyncCollection] = []
        if let list = keys["collections"] {
            guard let sequence = list.sequence else {
                problem(list, "collections", "must be a list")
                return nil
            }
            if sequence.count > AppDeclaration.Limits.collections {
                problem(list, "collections", "lists \(sequence.count): an app has at most \(AppDeclaration.Limits.collections)")
                return nil
            }
            let names = sequence.compactMap { $0.mapping?["name"]?.string }
            for (index, node) in sequence.enumerated() {
                if let collection = self.collection(node, "collections[\(index)]", app: id ?? "", siblings: names) {
                    if collections.contains(where: { $0.name == collection.name }) {
                        problem(node.mapping?["name"], "collections[\(index)].name", "'\(collection.name)' is declared twice")
                    } else {
                        collections.append(collection)
                    }
                }
            }
        }
        guard let id, let title else { return nil }
        return EventualApp(id: AnalyticsApp(declaring: id), title: title, collections: collections, needsVerifiedEmail: verified,
                           verifyCommand: verify, version: version, minimumVersion: minimumVersion)
    }

    mutating func collection(_ node: Node, _ place: String, app: String, siblings: [String]) -> SyncCollection? {
        guard let keys = mapping(node, place, known: ["name", "scope", "deletionIsFinal", "fields", "rules"], of: "a collection") else { return nil }
        let name = self.name(keys["name"], "\(place).name", Self.collectionName,
                             "a collection name: a lowercase letter, then up to 63 lowercase letters, digits or _")
        if let name, let owner = owners[name], owner != app {
            problem(keys["name"], "\(place).name", "'\(name)' is a collection of the app \(owner): choose another name")
        }
        var scope = SyncScope.person
        if let node = keys["scope"] {
            if let text = string(node, "\(place).scope"), let parsed = SyncScope(rawValue: text) {
                scope = parsed
            } else if node.string != nil {
                problem(node, "\(place).scope", "must be person or space")
            }
        }
        let final = bool(keys["deletionIsFinal"], "\(place).deletionIsFinal", default: false)
        var fields: [String: SyncField] = [:]
        if let node = keys["fields"], let pairs = mapping(node, "\(place).fields") {
            if pairs.count > AppDeclaration.Limits.fieldsPerCollection {
                problem(node, "\(place).fields", "declares \(pairs.count): a collection has at most \(AppDeclaration.Limits.fieldsPerCollection)")
                return nil
            }
            if pairs.isEmpty { problem(node, "\(place).fields", "declares none: a collection has at least one field") }
            for (fieldName, value) in pairs.sorted(by: { ($0.value.mark?.line ?? 0, $0.key) < ($1.value.mark?.line ?? 0, $1.key) }) {
                if let field = self.field(fieldName, value, "\(place).fields.\(fieldName)") { fields[fieldName] = field }
            }
        } else if keys["fields"] == nil {
            problem(node, "\(place).fields", "is missing")
        }
        var rules: [SyncRule] = []
        if let node = keys["rules"] {
            if let sequence = node.sequence {
                if sequence.count > AppDeclaration.Limits.rulesPerCollection {
                    problem(node, "\(place).rules", "lists \(sequence.count): a collection has at most \(AppDeclaration.Limits.rulesPerCollection)")
                } else {
                    for (index, ruleNode) in sequence.enumerated() {
                        if let rule = self.rule(ruleNode, "\(place).rules[\(index)]", fields: fields, siblings: siblings) { rules.append(rule) }
                    }
                }
            } else {
                problem(node, "\(place).rules", "must be a list")
            }
        }
        guard let name else { return nil }
        return SyncCollection(name: name, app: AnalyticsApp(declaring: app), fields: fields, scope: scope, rules: rules, deletionIsFinal: final)
    }

    mutating func field(_ name: String, _ node: Node, _ place: String) -> SyncField? {
        guard Self.fieldName.matches(name) else {
            problem(node, place, "is not a field name: a letter, then up to 63 letters, digits or _")
            return nil
        }
        if AppDeclaration.engineColumns.contains(name.lowercased()) || name.lowercased().hasPrefix("eventual_") {
            problem(node, place, "is named like a column the engine keeps itself: choose another name")
            return nil
        }
        guard let keys = mapping(node, place, known: ["type", "nullable", "maxLength", "default", "deprecated"], of: "a field") else { return nil }
        let types = ["string", "integer", "number", "boolean", "date", "counter"]
        guard let typeName = string(keys["type"], "\(place).type") else { return nil }
        guard let type = SyncFieldType(rawValue: typeName) else {
            problem(keys["type"], "\(place).type", "'\(typeName)' is not a type: use \(types.joined(separator: ", "))")
            return nil
        }
        let nullable = bool(keys["nullable"], "\(place).nullable", default: true)
        var maxLength: Int?
        if let node = keys["maxLength"] {
            if type != .string {
                problem(node, "\(place).maxLength", "applies to a string only")
            } else if node.scalar != nil, let length = node.int, (1...AppDeclaration.Limits.maxLength).contains(length) {
                maxLength = length
            } else {
                problem(node, "\(place).maxLength", "must be a whole number from 1 to \(AppDeclaration.Limits.maxLength)")
            }
        }
        let deprecated = bool(keys["deprecated"], "\(place).deprecated", default: false)
        var defaultValue: SyncValue?
        if let node = keys["default"] {
            defaultValue = self.defaultValue(node, "\(place).default", type: type, maxLength: maxLength)
            if defaultValue == nil { return nil }
        }
        return SyncField(type, nullable: nullable, maxLength: maxLength, default: defaultValue, deprecated: deprecated)
    }

    /// A field's default, a value of its type; nil (and a problem) for any other.
    mutating func defaultValue(_ node: Node, _ place: String, type: SyncFieldType, maxLength: Int?) -> SyncValue? {
        guard let scalar = node.scalar, node.null == nil else {
            problem(node, place, node.null != nil ? "is null: leave the default out for a field that starts empty" : "must be one value")
            return nil
        }
        // NB: a quoted scalar is a text whatever it reads as (`"12"`).
        let quoted = scalar.style == .singleQuoted || scalar.style == .doubleQuoted
        switch type {
        case .string, .date:
            guard let text = string(node, place) else { return nil }
            if let maxLength, text.count > maxLength {
                problem(node, place, "is \(text.count) characters: the field holds at most \(maxLength)")
                return nil
            }
            if type == .date, !Self.isCalendarDay(text) {
                problem(node, place, "'\(text.prefix(40))' is not a calendar day YYYY-MM-DD")
                return nil
            }
            return .string(text)
        case .integer:
            guard !quoted, node.bool == nil, let number = node.int else {
                problem(node, place, "must be a whole number: the field is an integer")
                return nil
            }
            return .integer(Int64(number))
        case .number, .counter:
            guard !quoted, node.bool == nil, let number = node.float, number.isFinite else {
                problem(node, place, "must be a number: the field is a \(type.rawValue)")
                return nil
            }
            return number == number.rounded() && abs(number) < 1e15 ? .integer(Int64(number)) : .number(number)
        case .boolean:
            guard !quoted, let flag = node.bool else {
                problem(node, place, "must be true or false: the field is a boolean")
                return nil
            }
            return .boolean(flag)
        }
    }

    /// Whether `text` is exactly `YYYY-MM-DD` and names a day of the calendar.
    static func isCalendarDay(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let year = Int64(parts[0]), let month = Int64(parts[1]), let day = Int64(parts[2]),
              (1...12).contains(month), (1...31).contains(day) else { return false }
        return CivilCalendar.text(ofDay: CivilCalendar.dayNumber(year: year, month: month, day: day)) == text
    }

    mutating func rule(_ node: Node, _ place: String, fields: [String: SyncField], siblings: [String]) -> SyncRule? {
        let kinds: Set = ["notBelow", "oneOf", "refersTo", "editableWhile"]
        guard let pairs = mapping(node, place, known: kinds, of: "a rule") else { return nil }
        guard pairs.count == 1, let (kind, body) = pairs.first else {
            if pairs.count > 1 { problem(node, place, "names \(pairs.count) rules: give one per item") }
            // NB: a rule of an unknown kind is said once, as its key.
            if pairs.isEmpty, node.mapping?.isEmpty ?? true { problem(node, place, "names no rule: use \(kinds.sorted().joined(separator: ", "))") }
            return nil
        }
        let inner = "\(place).\(kind)"
        let known: Set<String> = switch kind {
        case "notBelow": ["field", "minimum"]
        case "oneOf": ["field", "allowed"]
        case "refersTo": ["field", "collection", "matching"]
        default: ["field", "open"]
        }
        guard let keys = mapping(body, inner, known: known, of: "a \(kind) rule"), let field = string(keys["field"], "\(inner).field") else { return nil }
        guard let declared = fields[field] else {
            problem(keys["field"], "\(inner).field", "'\(field)' is not a field of this collection")
            return nil
        }
        switch kind {
        case "notBelow":
            guard [.integer, .number, .counter].contains(declared.type) else {
                problem(keys["field"], "\(inner).field", "'\(field)' is a \(declared.type.rawValue): notBelow takes a number")
                return nil
            }
            guard let node = keys["minimum"], node.scalar != nil, let minimum = node.float, minimum.isFinite else {
                problem(keys["minimum"] ?? body, "\(inner).minimum", keys["minimum"] == nil ? "is missing" : "must be a number")
                return nil
            }
            return .notBelow(field, minimum)
        case "oneOf", "editableWhile":
            let listKey = kind == "oneOf" ? "allowed" : "open"
            guard declared.type == .string else {
                problem(keys["field"], "\(inner).field", "'\(field)' is a \(declared.type.rawValue): \(kind) takes a string")
                return nil
            }
            guard let list = keys[listKey]?.sequence, !list.isEmpty, list.count <= AppDeclaration.Limits.allowedValues else {
                problem(keys[listKey] ?? body, "\(inner).\(listKey)", "must list 1 to \(AppDeclaration.Limits.allowedValues) values")
                return nil
            }
            let values = list.enumerated().compactMap { string($0.element, "\(inner).\(listKey)[\($0.offset)]") }
            guard values.count == list.count else { return nil }
            guard Set(values).count == values.count else {
                problem(keys[listKey], "\(inner).\(listKey)", "lists a value twice")
                return nil
            }
            return kind == "oneOf" ? .oneOf(field, values) : .editableWhile(field, values)
        default:
            guard let target = string(keys["collection"], "\(inner).collection") else { return nil }
            guard siblings.contains(target) else {
                problem(keys["collection"], "\(inner).collection", "'\(target)' is not a collection of this app")
                return nil
            }
            var matching: [String: String] = [:]
            if let node = keys["matching"], let pairs = mapping(node, "\(inner).matching") {
                for (here, there) in pairs {
                    guard let there = string(there, "\(inner).matching.\(here)") else { continue }
                    if fields[here] == nil { problem(node, "\(inner).matching.\(here)", "'\(here)' is not a field of this collection") }
                    matching[here] = there
                }
            }
            return .refersTo(field, collection: target, matching: matching)
        }
    }
}

extension AppDeclaration {
    /// The declaration of `app` as a file holds it: what `read` reads back as the same app (the
    /// built-in apps' files are made so, and a test reads them back).
    public static func yaml(of app: EventualApp) -> String {
        func quoted(_ text: String) -> String {
            // NB: a JSON string is a YAML double-quoted scalar: every character survives.
            String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
        }
        func number(_ value: Double) -> String { value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value) }
        var lines = ["id: \(app.id.rawValue)", "title: \(quoted(app.title))"]
        if app.version != 1 { lines.append("version: \(app.version)") }
        if app.minimumVersion != 1 { lines.append("minimumVersion: \(app.minimumVersion)") }
        lines.append("verifiedEmail: \(app.needsVerifiedEmail)")
        if let verify = app.verifyCommand { lines.append("verifyCommand: \(quoted(verify))") }
        lines.append(app.collections.isEmpty ? "collections: []" : "collections:")
        for collection in app.collections {
            lines.append("  - name: \(collection.name)")
            lines.append("    scope: \(collection.scope.rawValue)")
            if collection.deletionIsFinal { lines.append("    deletionIsFinal: true") }
            lines.append("    fields:")
            for (name, field) in collection.fields.sorted(by: { $0.key < $1.key }) {
                var parts = ["type: \(field.type.rawValue)"]
                if !field.nullable { parts.append("nullable: false") }
                if let length = field.maxLength { parts.append("maxLength: \(length)") }
                switch field.defaultValue {
                case .string(let text)?: parts.append("default: \(quoted(text))")
                case .integer(let number)?: parts.append("default: \(number)")
                case .number(let value)?: parts.append("default: \(number(value))")
                case .boolean(let flag)?: parts.append("default: \(flag)")
                case .null?, nil: break
                }
                if field.deprecated { parts.append("deprecated: true") }
                lines.append("      \(name): { \(parts.joined(separator: ", ")) }")
            }
            guard !collection.rules.isEmpty else { continue }
            lines.append("    rules:")
            for rule in collection.rules {
                switch rule {
                case .notBelow(let field, let minimum):
                    lines.append("      - notBelow: { field: \(field), minimum: \(number(minimum)) }")
                case .oneOf(let field, let allowed):
                    lines.append("      - oneOf: { field: \(field), allowed: [\(allowed.map(quoted).joined(separator: ", "))] }")
                case .editableWhile(let field, let open):
                    lines.append("      - editableWhile: { field: \(field), open: [\(open.map(quoted).joined(separator: ", "))] }")
                case .refersTo(let field, let collection, let matching):
                    let pairs = matching.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
                    lines.append("      - refersTo: { field: \(field), collection: \(collection)" + (matching.isEmpty ? " }" : ", matching: { \(pairs) } }"))
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
