import EventualAPI
import EventualKit
import Foundation

/// What the commands say of an attachment (a receipt, a photo), and how they save one to a file.
public enum AttachmentWords {
    /// Prepares the photo named on the command line by `option` (`-`: standard input), checked
    /// as every app checks one (`CommandFile`), said in one line when it cannot be attached.
    public static func prepare(_ path: String, option: String, with attachments: Attachments) throws -> PreparedAttachment {
        let file = try CommandFile.photo(path, option: option)
        defer { file.remove() }
        do {
            return try attachments.prepare(fileAt: file.url)
        } catch let error as AttachmentError {
            throw CLIError("\(file.name): \(error)")
        }
    }

    /// "JPEG, 2.1 MiB, on this device, waiting to be uploaded".
    public static func describe(_ reference: AttachmentReference, in attachments: Attachments) throws -> String {
        let state = try attachments.state(reference)
        guard state != .notOnDevice, let data = try? Data(contentsOf: attachments.file(reference)) else {
            return "not on this device (--save FILE downloads it)"
        }
        let type = AttachmentContentType.recognise(data).map { "\($0)".uppercased() } ?? "file"
        let size = ByteCount.text(Int64(data.count))
        switch state {
        case .waitingToUpload: return "\(type), \(size), on this device, waiting to be uploaded"
        case .uploadRefused(let reason): return "\(type), \(size), on this device; the server refused its upload: \(reason) (see status: retry or discard)"
        case .onDevice, .notOnDevice: return "\(type), \(size), on this device"
        }
    }

    /// Writes the attachment's bytes to `path` (`-`: standard output), downloading them if this
    /// device has none, never over an existing file, and never leaving half a file (a full disk):
    /// answers what was saved (nil for standard output, which holds the bytes only).
    public static func save(_ reference: AttachmentReference, space: String?, to path: String, with attachments: Attachments) async throws
        -> String? {
        guard !path.isEmpty else { throw CLIError("Give a file name to save to, not an empty one (- for standard output)") }
        let target = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        if path != "-", FileManager.default.fileExists(atPath: target.path, isDirectory: &isFolder) {
            throw CLIError(isFolder.boolValue ? "\(path) is a folder: give a file name (one inside it, such as \(path)/photo.jpg)"
                                              : "\(path) exists already: give another file name")
        }
        let data: Data
        do {
            data = try await attachments.data(reference, space: space)
        } catch let error as AttachmentError {
            throw CLIError(error.description.prefix(1).uppercased() + error.description.dropFirst())
        } catch let failure as RemoteFailure {
            throw CLIError("Not on this device, and it cannot be downloaded now: \(failure)")
        }
        if path == "-" {
            do {
                try FileHandle.standardOutput.write(contentsOf: data)
            } catch {
                // NB: the non-throwing write would stop the process on a full disk or a closed pipe.
                throw CLIError("Cannot write to standard output: \(String(cString: strerror(errno)).lowercased())")
            }
            return nil
        }
        // NB: written beside the target, then linked to its name: a full disk leaves no half file
        // that a second try would refuse to write over, and a file made meanwhile is never replaced.
        let partial = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).partial")
        do {
            try data.write(to: partial)
            try FileManager.default.linkItem(at: partial, to: target)
            try? FileManager.default.removeItem(at: partial)
        } catch let error as CocoaError {
            try? FileManager.default.removeItem(at: partial)
            if error.code == .fileWriteFileExists { throw CLIError("\(path) exists already: give another file name") }
            throw FileProblem(error, path: path)
        }
        return "Saved \(ByteCount.text(Int64(data.count))) to \(path)."
    }
}
