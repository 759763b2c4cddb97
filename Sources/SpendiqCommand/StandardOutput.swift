import CommandLineSupport
import Foundation

/// Large output (an export) written to stdout so that a failed write is said, never a trap.
enum StandardOutput {
    /// Writes `text` to stdout, or says in one line why it could not.
    static func write(_ text: String) throws {
        // NB: FileHandle.write(_: Data) traps on a failed write (a full disk); write(contentsOf:) throws.
        do {
            try FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
        } catch {
            let code = (error as NSError).domain == NSPOSIXErrorDomain ? Int32((error as NSError).code) : errno
            throw CLIError("Cannot write to standard output: " + (code == ENOSPC ? "the disk is full" : String(cString: strerror(code))))
        }
    }
}
