/// What a redeploy of an app may change: until an app's declaration has versions, a new one may
/// only add to what devices and stored records already hold, so that no record stored under the
/// old one, and no change a device made with it, becomes one the server refuses.
///
/// Allowed: a new collection, a new nullable field, a looser field (nullable, a longer
/// `maxLength`, or none), a rule removed or loosened (`oneOf` allowing more, `notBelow` lower),
/// a new title, verification or verify command. Anything else is refused, naming the step.
public enum AppRedeploy {
    /// The steps from `old` to `new` that a redeploy may not take, each said in one line with its
    /// place; empty when `new` only adds.
    public static func problems(from old: EventualApp, to new: EventualApp) -> [DeclarationProblem] {
        var problems: [DeclarationProblem] = []
        func refuse(_ place: String, _ message: String) {
            problems.append(DeclarationProblem(line: nil, place: place, message: message))
        }
        if old.id != new.id { refuse("id", "is \(new.id.rawValue), not \(old.id.rawValue): an app keeps its id") }
        let wait = "waits for app versions: add a new field or collection instead, and stop writing the old one"
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
                if let before = oldField.maxLength, (field.maxLength ?? .max) < before {
                    refuse("\(fieldPlace).maxLength", "shrinks from \(before) to \(field.maxLength ?? 0): a tighter length \(wait)")
                } else if oldField.maxLength == nil, let after = field.maxLength, oldField.type == .string || oldField.type == .date {
                    refuse("\(fieldPlace).maxLength", "becomes \(after) where there was none: a tighter length \(wait)")
                }
            }
            for (name, field) in collection.fields.sorted(by: { $0.key < $1.key }) where oldCollection.fields[name] == nil && !field.nullable {
                refuse("\(place).fields.\(name)", "is new and not nullable: records stored before it have none; declare it nullable")
            }
            for (index, rule) in collection.rules.enumerated() where !oldCollection.rules.contains(where: { loosens($0, into: rule) }) {
                refuse("\(place).rules[\(index)]", "is a new or tighter rule (\(rule.field)): records stored before it may break it; that \(wait)")
            }
        }
        return problems
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
