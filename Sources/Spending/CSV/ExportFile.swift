import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes an export where a person asked without destroying what is there: a new file, or a
/// regular file when they agreed to write over it; through a symbolic link to its target; never
/// over a device, a folder or a pipe. The bytes go to a temporary file beside the target first,
/// so a full disk leaves the old file whole.
enum ExportFile {
    static func write(_ data: Data, to path: String, overwrite: Bool) throws(SpendingError) {
        let target = try resolve(path)
        var info = stat()
        let exists = lstat(target, &info) == 0
        if exists {
            guard info.st_mode & S_IFMT == S_IFREG else { throw .exportNotAFile(path) }
            guard overwrite else { throw .exportExists(path) }
        }
        let folder = (target as NSString).deletingLastPathComponent
        var template = Array(((folder.isEmpty ? "." : folder) + "/.\((target as NSString).lastPathComponent).XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw failure(path) }
        let temporary = String(cString: template)
        var done = false
        defer { if !done { unlink(temporary) } }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 { if errno == EINTR { continue }; return false }
                offset += count
            }
            return true
        }
        guard written, fsync(descriptor) == 0 else {
            let error = failure(path)
            close(descriptor)
            throw error
        }
        if exists { fchmod(descriptor, info.st_mode & 0o7777) }
        guard close(descriptor) == 0 else { throw failure(path) }
        if exists {
            guard rename(temporary, target) == 0 else { throw failure(path) }
        } else {
            // NB: link, unlike rename, fails when something took the name since the check.
            guard link(temporary, target) == 0 else { throw errno == EEXIST ? .exportExists(path) : failure(path) }
            unlink(temporary)
        }
        done = true
    }

    /// The path a symbolic link chain ends at (which may not exist yet); `path` itself otherwise.
    private static func resolve(_ path: String) throws(SpendingError) -> String {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count >= 0 else { throw failure(path) }
            let destination = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = destination.hasPrefix("/") ? destination
                : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(destination)
        }
        throw .file("Cannot write \(path): too many symbolic links")
    }

    private static func failure(_ path: String) -> SpendingError {
        .file("Cannot write \(path): \(String(cString: strerror(errno)).lowercased())")
    }
}

// NB: `write` inside ExportFile would name ExportFile.write.
#if canImport(Glibc)
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
#endif
