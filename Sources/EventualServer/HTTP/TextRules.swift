import EventualAPI

extension TextRules {
    /// Throws a 400 naming `field` if `value` holds a character `allowance` does not permit.
    static func check(_ value: String, field: String, _ allowance: Allowance = .singleLine) throws(APIError) {
        if let problem = problem(in: value, allowance) {
            throw .badRequest("\(field) must not contain \(problem)")
        }
    }
}
