import EventualKit
import Foundation

/// A photo taken for a scan, kept in the app's folder until the server has classified it.
enum PhotoFile {
    /// Checks a scan's photo (JPEG, PNG or HEIC by its bytes, at most 20 MiB) and keeps it as an
    /// attachment, in SustainU's words when it cannot be.
    static func prepare(_ source: URL, with attachments: Attachments) throws -> PreparedAttachment {
        do {
            return try attachments.prepare(fileAt: source)
        } catch let error as AttachmentError {
            switch error {
            case .notUploadedYet, .corrupt: throw error
            default: throw RecyclingError.photo(path: source.path, problem: error)
            }
        }
    }
}
