import Foundation

/// A file that could not be read or written, said as its path and a few words, instead of
/// Foundation's `Error Domain=NSCocoaErrorDomain Code=…`.
public struct FileProblem: Error, CustomStringConvertible {
    public private(set) var description: String
    /// The few words, without the path.
    public let reason: String

    /// The problem, said of `path` instead of the file the error names (a temporary one beside it).
    public init(_ error: CocoaError, path: String) {
        self.init(error)
        description = "\(path): \(reason)"
    }

    public init(_ error: CocoaError) {
        let path = error.userInfo[NSFilePathErrorKey] as? String ?? (error.userInfo[NSURLErrorKey] as? URL)?.path
        switch error.code {
        case .fileNoSuchFile, .fileReadNoSuchFile: reason = "there is no such file or folder"
        case .fileReadNoPermission, .fileWriteNoPermission: reason = "permission denied"
        case .fileWriteOutOfSpace: reason = "the disk is full"
        case .fileWriteVolumeReadOnly: reason = "the disk is read-only"
        case .fileWriteFileExists: reason = "something with that name is already there"
        case .fileReadCorruptFile, .fileReadUnknownStringEncoding, .fileReadInapplicableStringEncoding: reason = "it cannot be read"
        default:
            if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
                reason = String(cString: strerror(Int32(underlying.code))).lowercased()
            } else {
                reason = "the file operation failed (\(error.code.rawValue))"
            }
        }
        let reason = self.reason
        description = path.map { "\($0): \(reason)" } ?? "A file could not be read or written: \(reason)"
    }
}
