import CommandLineSupport
import Foundation

extension Terminal {
    /// Asks a question on the terminal and returns the answer.
    static func ask(_ question: String) throws(CLIError) -> String? {
        FileHandle.standardError.write(Data(question.utf8))
        return try readLine(strippingNewline: true).map { line throws(CLIError) in try CommandLineText.checkedLine(line, what: "answer") }
    }
}
