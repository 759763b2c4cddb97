/// What a new version of an app may change from the version served: it may only add to what
/// devices and stored records already hold, so that no record stored under an earlier version,
/// and no change a device of it made, becomes one the server refuses, and devices of every
/// version sync side by side.
///
/// Allowed: a new collection, a new field that is nullable or has a default, a field deprecated,
/// a looser field (nullable, a longer `maxLength`, or none), a rule removed or loosened (`oneOf`
/// allowing more, `notBelow` lower), a new title, verification or verify command. Refused, naming
/// the step and the way to take it instead: a rename or a removal, a type change, a tighter
/// rule or length, a default changed. A new declaration is a new version: its `version` is
/// above the one served.
public enum AppRedeploy {
    /// Why `new` cannot follow `old` by its version: not above the one served; nil when it is.
    /// The same version may come again with another `minimumVersion` alone: the operator raises
    /// (or lowers) the oldest version served without a new declaration of the app.
    public static func versionProblem(from old: EventualApp, to new: EventualApp) -> DeclarationProblem? {
        guard new.version <= old.version else { return nil }
        if new.version == old.version, new.minimumVersion != old.minimumVersion, new.keepingMinimum(of: old) == old { return nil }
        let differs = steps(from: old, to: new).prefix(2).joined(separator: "; ")
        let message = new.version == old.version
            ? "is \(new.version), the version served, which declares the app otherwise" + (differs.isEmpty ? "" : " (it \(differs))")
                + ": give this declaration version \(old.version + 1)"
            : "is \(new.version), below version \(old.version) served: a version only goes up; give this declaration version \(old.version + 1)"
        return DeclarationProblem(line: nil, place: "version", message: message)
    }

    /// Why `new` may not lower the minimum version served unless the operator says so
    /// (`lowering`): a declaration that omits `minimumVersion`, an older file deployed again,
    /// would let devices of the versions below sync again without a word.
    public static func minimumProblem(from old: EventualApp, to new: EventualApp, lowering: Bool = false) -> DeclarationProblem? {
        guard new.minimumVersion < old.minimumVersion, !lowering else { return nil }
        return DeclarationProblem(line: nil, place: "minimumVersion", message: "is \(new.minimumVersion) (none said is 1), below the"
            + " \(old.minimumVersion) served: devices of the versions between would sync again; say minimumVersion: \(old.minimumVersion)"
            + " to keep it, or deploy with --lower-minimum to lower it")
    }

    /// The steps from `old` to `new`, each in a line (`adds items.brand (null by default)`), in
    /// the declaration's order: what `apps deploy` says it did.
    public static func steps(from old: EventualApp, to new: EventualApp) -> [String] {
        var steps: [String] = []
        for collection in new.collections {
            guard let before = old.collections.first(where: { $0.name == collection.name }) else {
                steps.append("adds the collection \(collection.name) (\(collection.fields.count) field(s))")
                continue
            }
            for (name, field) in collection.fields.sorted(by: { $0.key < $1.key }) {
                let place = "\(collection.name).\(name)"
                guard let oldField = before.fields[name] else {
                    steps.append("adds \(place) (\(field.defaultValue.map { "\(shown($0)) by default" } ?? "null by default"))")
                    continue
                }
                if field.deprecated && !oldField.deprecated { steps.append("deprecates \(place)") }
                if !field.deprecated && oldField.deprecated { steps.append("takes \(place) back into use") }
                if field.nullable && !oldField.nullable { steps.append("lets \(place) be null") }
                if field.maxLength != oldField.maxLength {
                    steps.append("lets \(place) hold " + (field.maxLength.map { "\($0) characters" } ?? "any length"))
                }
            }
            for rule in before.rules where !collection.rules.contains(rule) {
                steps.append(collection.rules.contains(where: { loosens(rule, into: $0) })
                    ? "loosens a rule of \(collection.name).\(rule.field)" : "drops a rule of \(collection.name).\(rule.field)")
            }
        }
        if new.title != old.title { steps.append("is titled \(new.title)") }
        if new.needsVerifiedEmail != old.needsVerifiedEmail || new.verifyCommand != old.verifyCommand { steps.append("changes its verification") }
        if new.minimumVersion > old.minimumVersion {
            steps.append("raises its minimum version to \(new.minimumVersion): devices of an earlier version are told to update the app")
        } else if new.minimumVersion < old.minimumVersion {
            steps.append("lowers its minimum version to \(new.minimumVersion)")
        }
        return steps
    }

    /// The steps from `old` to `new` that a redeploy may not take, each said in one line with its
    /// place; empty when `new` only adds.
    public static func problems(from old: EventualApp, to new: EventualApp) -> [DeclarationProblem] {
        var problems: [DeclarationProblem] = []
        func refuse(_ place: String, _ message: String) {
            problems.append(DeclarationProblem(line: nil, place: place, message: message))
        }
        if old.id != new.id { refuse("id", "is \(new.id.rawValue), not \(old.id.rawValue): an app keeps its id") }
        let wait = "is refused: devices of earlier versions still hold and send what it forbids; add a new field or collection"
            + " instead, and deprecate the old one"
        for oldCollection in old.collections {
            let place = "collection \(oldCollection.name)"
            guard let collection = new.collections.first(where: { $0.name == oldCollection.name }) else {
                refuse(place, "is gone: removing a collection \(wait)")
                continue
            }
            if collection.scope != oldCollection.scope {
                refuse("\(place).scope", "changes from \(oldCollection.scope.rawValue) to \(collection.scope.rawValue): that \(wait)")
            }
            if collection.deletionIsFinal != oldCollection.deletionIsFinal {
                refuse("\(place).deletionIsFinal", "changes how deletions merge: that \(wait)")
            }
            for (name, oldField) in oldCollection.fields.sorted(by: { $0.key < $1.key }) {
                let fieldPlace = "\(place).fields.\(name)"
                guard let field = collection.fields[name] else {
                    refuse(fieldPlace, "is gone: removing a field \(wait)")
                    continue
                }
                if field.type != oldField.type {
                    refuse("\(fieldPlace).type", "changes from \(oldField.type.rawValue) to \(field.type.rawValue): a type change \(wait)")
                }
                if oldField.nullable && !field.nullable {
                    refuse("\(fieldPlace).nullable", "becomes false: records stored without it would break it; that \(wait)")
                }
                if field.defaultValue != oldField.defaultValue {
                    refuse("\(fieldPlace).default", "changes: records stored without the field would read otherwise on"
                        + " devices of each version; add a new field with the new default instead, and deprecate this one")
                }
                if let before = oldField.maxLength, (field.maxLength ?? .max) < before {
                    refuse("\(fieldPlace).maxLength", "shrinks from \(before) to \(field.maxLength ?? 0): a tighter length \(wait)")
                } else if oldField.maxLength == nil, let after = field.maxLength, oldField.type == .string || oldField.type == .date {
                    refuse("\(fieldPlace).maxLength", "becomes \(after) where there was none: a tighter length \(wait)")
                }
            }
            for (name, field) in collection.fields.sorted(by: { $0.key < $1.key })
            where oldCollection.fields[name] == nil && !field.nullable && field.defaultValue == nil {
                refuse("\(place).fields.\(name)", "is new and not nullable: records stored before it have none; declare it nullable,"
                    + " or give it a default")
            }
            for (index, rule) in collection.rules.enumerated() where !oldCollection.rules.contains(where: { loosens($0, into: rule) }) {
                refuse("\(place).rules[\(index)]", "is a new or tighter rule (\(rule.field)): records stored before it may break it; that \(wait)")
            }
        }
        return problems
    }

    /// A default as a declaration spells it: a text in quotes.
    private static func shown(_ value: SyncValue) -> String {
        if case .string(let text) = value { return "\"\(text)\"" }
        return value.description
    }

    /// Whether `new` holds every record `old` holds: the same rule, or the same one looser.
    static func loosens(_ old: SyncRule, into new: SyncRule) -> Bool {
        switch (old, new) {
        case (.oneOf(let field, let before), .oneOf(let newField, let after)):
            return field == newField && Set(before).isSubset(of: after)
        case (.notBelow(let field, let before), .notBelow(let newField, let after)):
            return field == newField && after <= before
        case (.editableWhile(let field, let before), .editableWhile(let newField, let after)):
            return field == newField && Set(before).isSubset(of: after)
        default:
            return old == new
        }
    }
}
