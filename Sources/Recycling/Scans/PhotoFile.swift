import EventualKit
import Foundation

/// A photo taken for a scan, kept in the app's folder until the server has classified it.
enum PhotoFile {
    static let maxBytes = 4 * 1024 * 1024

    /// Checks a scan's photo (JPEG, PNG or HEIC by its bytes, at most 20 MiB) and keeps it as an
    /// attachment, in SustainU's words when it cannot be.
    static func prepare(_ source: URL, with attachments: Attachments) throws -> PreparedAttachment {
        do {
            return try attachments.prepare(fileAt: source)
        } catch let error as AttachmentError {
            switch error {
            case .unreadable: throw RecyclingError.unreadablePhoto(path: source.path, reason: "there is no such file, or it cannot be read")
            case .notAFile: throw RecyclingError.unreadablePhoto(path: source.path, reason: "it is not a file (a folder, a pipe or a device)")
            case .tooLarge(let bytes): throw RecyclingError.photoTooLarge(path: source.path, bytes: Int(bytes))
            case .empty, .notAnImage: throw RecyclingError.notAPhoto(path: source.path)
            case .cannotStore: throw RecyclingError.unreadablePhoto(path: source.path, reason: "the copy could not be saved (is the disk full?)")
            case .notUploadedYet, .corrupt: throw error
            }
        }
    }

    /// Checks that `source` is a JPEG or PNG of at most 4 MiB and copies it into `folder` as
    /// `<scan id>.jpg|png`. Returns the copy's file name.
    static func keep(_ source: URL, as scanID: String, in folder: URL) throws -> String {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: source.path, isDirectory: &isFolder), isFolder.boolValue {
            throw RecyclingError.unreadablePhoto(path: source.path, reason: "it is a folder, not a photo")
        }
        let data: Data
        do {
            data = try Data(contentsOf: source)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile || error.code == .fileNoSuchFile {
            throw RecyclingError.unreadablePhoto(path: source.path, reason: "there is no such file")
        } catch {
            throw RecyclingError.unreadablePhoto(path: source.path, reason: "it cannot be read")
        }
        guard data.count <= maxBytes else { throw RecyclingError.photoTooLarge(path: source.path, bytes: data.count) }
        guard let kind = kind(of: data) else { throw RecyclingError.notAPhoto(path: source.path) }
        let name = "\(scanID).\(kind)"
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try data.write(to: folder.appendingPathComponent(name), options: .atomic)
        } catch {
            throw RecyclingError.unreadablePhoto(path: folder.path, reason: "the copy could not be saved (is the disk full?)")
        }
        return name
    }

    /// "jpg" or "png" by the file's first bytes, nil for anything else.
    static func kind(of data: Data) -> String? {
        if data.starts(with: [0xFF, 0xD8, 0xFF]) { return "jpg" }
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
        return nil
    }
}
