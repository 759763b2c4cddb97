/// `add expense -5` and `transfer -5`: ArgumentParser takes "-5" for an option and says
/// "Missing expected argument '<amount>'"; given as the amount, the model says why it is refused.
enum NegativeAmounts {
    /// The arguments with a negative number right after `expense`, `income` or `transfer` given one
    /// leading space, which makes it a value (amounts are read trimmed).
    static func asValues(_ arguments: [String]) -> [String] {
        var afterTerminator = false
        return arguments.indices.map { index in
            let argument = arguments[index]
            if argument == "--" { afterTerminator = true }
            guard !afterTerminator, index > 0, ["expense", "income", "transfer"].contains(arguments[index - 1]),
                  argument.hasPrefix("-"), argument.dropFirst().first?.isNumber == true else { return argument }
            return " " + argument
        }
    }
}
