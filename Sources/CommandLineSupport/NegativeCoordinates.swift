import Foundation

/// Lets a person type a position in the southern or western hemisphere (`--near -33.9,151.2`,
/// `locate -33.9,151.2`): ArgumentParser takes anything that starts with "-" for an option.
public enum NegativeCoordinates {
    /// The arguments with every `LATITUDE,LONGITUDE` pair that starts with a minus given one
    /// leading space, which makes it a value for ArgumentParser, as an option's value and as a
    /// positional argument alike. Coordinate parsers trim spaces around each number.
    // NB: only pairs: a lone negative number (`-5`) stays as typed, since an `Int` or `Double`
    // option would refuse the space; such an option takes `@Option(parsing: .unconditional)`.
    public static func asValues(_ arguments: [String]) -> [String] {
        var afterTerminator = false
        return arguments.map { argument in
            if argument == "--" { afterTerminator = true }
            return !afterTerminator && isNegativePair(argument) ? " " + argument : argument
        }
    }

    /// `-33.9,151.2`, `-33.9,-70`, `-.5, 3`: a minus, a number, a comma and a number.
    static func isNegativePair(_ text: String) -> Bool {
        guard text.hasPrefix("-") else { return false }
        let parts = text.dropFirst().split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2 else { return false }
        return isUnsignedDecimal(parts[0]) && isUnsignedDecimal(parts[1].hasPrefix("-") ? String(parts[1].dropFirst()) : parts[1])
    }

    private static func isUnsignedDecimal(_ text: String) -> Bool {
        text.contains(where: \.isASCIIDigit) && text.allSatisfy { $0.isASCIIDigit || $0 == "." } && text.filter { $0 == "." }.count <= 1
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
