import EventualAPI

/// The text rules of a push, checked before anything else: a NUL or a control character in an
/// id, a name or a value refuses the whole push with a 400 naming the change and field.
///
/// NB: a refusal here is a 400 rather than one change's `rejected`: a change id that cannot be
/// stored whole cannot be remembered either, and before these rules such a batch answered 500
/// on every retry, stalling the device's outbox for good.
enum SyncInputRules {
    static func check(_ changes: [Components.Schemas.SyncChange]) throws(APIError) {
        for (index, change) in changes.enumerated() {
            let path = "changes[\(index)]"
            try TextRules.check(change.id, field: "\(path).id")
            try TextRules.check(change.collection, field: "\(path).collection")
            try TextRules.check(change.recordId, field: "\(path).recordId")
            try TextRules.check(change.hlc, field: "\(path).hlc")
            if let space = change.space { try TextRules.check(space, field: "\(path).space") }
            for (name, value) in change.fields.additionalProperties.value {
                try TextRules.check(name, field: "\(path).fields (a field name)")
                if let text = value as? String {
                    try TextRules.check(text, field: "\(path).fields.\(name)", .multiLine)
                }
            }
        }
    }
}
