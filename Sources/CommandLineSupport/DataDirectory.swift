import Foundation

/// An app's data folder on this device.
enum DataDirectory {
    /// Makes sure the data directory is a folder this process can write, so that a mistake in
    /// `--data-dir` is said as such and not as a failed sign-in or database.
    static func prepare(_ directory: URL) throws(CLIError) {
        let path = directory.path
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw CLIError("The data directory \(path) is a file, not a folder: choose another --data-dir") }
        } else {
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch let error as CocoaError {
                throw CLIError("Cannot create the data directory \(path): \(FileProblem(error).reason)")
            } catch {
                throw CLIError("Cannot create the data directory \(path): \(Terminal.message(error))")
            }
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw CLIError("The data directory \(path) is not writable: choose another --data-dir, or fix its permissions")
        }
    }
}
