import ArgumentParser
import EventualAPI
import Foundation

/// A photo named on the command line (`pantry add --photo`, `spendiq add --receipt`, `sustainu
/// scan --image`, `pantry scan --image`), checked one way in every app: `-` reads standard input,
/// an empty path, a missing file, a folder, an empty file or bytes that are no JPEG, PNG or HEIC
/// are each said the same way, with the path once.
public struct CommandFile {
    /// Where to read it: the file, or a copy of standard input.
    public let url: URL
    /// How to name it to the person: the path, or "the photo on standard input".
    public let name: String
    private let isCopy: Bool

    /// The file at `path` (`-`: standard input, copied to a file of its own so that every reader
    /// reads it like any other), checked to be a photo; `option` names the option in a message.
    public static func photo(_ path: String, option: String) throws -> CommandFile {
        // NB: a usage mistake (64), as any option given no value it can take.
        guard !path.isEmpty else { throw ValidationError("\(option) needs a photo's path, not an empty one (- reads standard input)") }
        guard path == "-" else {
            let file = CommandFile(url: URL(fileURLWithPath: path), name: path, isCopy: false)
            try file.check()
            return file
        }
        let data = FileHandle.standardInput.readDataToEndOfFile()
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-stdin-\(UUID().uuidString)")
        do { try data.write(to: copy) } catch let error as CocoaError { throw FileProblem(error) }
        let file = CommandFile(url: copy, name: "the photo on standard input", isCopy: true)
        do { try file.check() } catch { file.remove(); throw error }
        return file
    }

    /// Removes the copy of standard input, if this is one.
    public func remove() {
        if isCopy { try? FileManager.default.removeItem(at: url) }
    }

    /// What is wrong with the file as a photo, in one line naming it once.
    private func check() throws {
        // NB: a link whose target is gone is neither a folder nor a device: say what it is.
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) != nil, !FileManager.default.fileExists(atPath: url.path) {
            throw CLIError("\(name): it is a link to a file that is not there")
        }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: url.resolvingSymlinksInPath().path)
        } catch {
            throw CLIError("\(name): there is no such file, or it cannot be read")
        }
        // NB: a FIFO or a device would block the read for ever.
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw CLIError("\(name): it is not a file (a folder, a pipe or a device)")
        }
        guard let handle = try? FileHandle(forReadingFrom: url) else { throw CLIError("\(name): there is no such file, or it cannot be read") }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 16)) ?? Data()
        guard !head.isEmpty else { throw CLIError("\(name): the file is empty") }
        guard AttachmentContentType.recognise(head) != nil else { throw CLIError("\(name): it is not a JPEG, PNG or HEIC photo") }
    }
}
