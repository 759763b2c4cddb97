import EventualAPI
import EventualKit
import Foundation

/// What the commands say of an attachment (a receipt, a photo), and how they save one to a file.
public enum AttachmentWords {
    /// Prepares the file named on the command line, said in one line when it cannot be attached.
    public static func prepare(_ path: String, with attachments: Attachments) throws -> PreparedAttachment {
        do {
            return try attachments.prepare(fileAt: URL(fileURLWithPath: path))
        } catch let error as AttachmentError {
            throw CLIError("\(path): \(error)")
        }
    }

    /// "JPEG, 2.1 MiB, on this device, waiting to be uploaded".
    public static func describe(_ reference: AttachmentReference, in attachments: Attachments) throws -> String {
        let state = try attachments.state(reference)
        guard state != .notOnDevice, let data = try? Data(contentsOf: attachments.file(reference)) else {
            return "not on this device (--save FILE downloads it)"
        }
        let type = AttachmentContentType.recognise(data).map { "\($0)".uppercased() } ?? "file"
        let size = AttachmentError.mebibytesText(Int64(data.count))
        return "\(type), \(size), on this device" + (state == .waitingToUpload ? ", waiting to be uploaded" : "")
    }

    /// Writes the attachment's bytes to `path` (downloading them if this device has none), never
    /// over an existing file; answers what was saved.
    public static func save(_ reference: AttachmentReference, space: String?, to path: String, with attachments: Attachments) async throws
        -> String {
        let target = URL(fileURLWithPath: path)
        guard !FileManager.default.fileExists(atPath: target.path) else {
            throw CLIError("\(path) exists already: give another file name")
        }
        let data: Data
        do {
            data = try await attachments.data(reference, space: space)
        } catch let error as AttachmentError {
            throw CLIError(error.description.prefix(1).uppercased() + error.description.dropFirst())
        } catch let failure as RemoteFailure {
            throw CLIError("Not on this device, and it cannot be downloaded now: \(failure)")
        }
        do {
            try data.write(to: target, options: .withoutOverwriting)
        } catch let error as CocoaError {
            throw FileProblem(error)
        }
        return "Saved \(AttachmentError.mebibytesText(Int64(data.count))) to \(path)."
    }
}
