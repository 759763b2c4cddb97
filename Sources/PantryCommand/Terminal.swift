import CommandLineSupport
import Foundation
import EventualKit
import Pantry

extension Terminal {
    /// Asks a question on the terminal and returns the answer.
    static func ask(_ question: String) throws(CLIError) -> String? {
        FileHandle.standardError.write(Data(question.utf8))
        return try readLine(strippingNewline: true).map { line throws(CLIError) in try CommandLineText.checkedLine(line, what: "answer") }
    }
}

extension PantryError {
    /// A value typed on the command line that cannot be one (status 64, like any usage mistake).
    var isMalformedArgument: Bool {
        switch self {
        case .invalidBarcode, .invalidExpiry, .invalidWindow, .invalidCoordinates, .invalidQuantity, .invalidRating, .pickOutOfRange:
            return true
        default:
            return false
        }
    }
}

extension OutboxError {
    /// An entry id too short to pick one change is typed wrong, like any malformed argument.
    var isMalformedArgument: Bool {
        if case .idTooShort = self { true } else { false }
    }
}
