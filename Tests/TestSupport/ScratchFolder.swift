import Foundation

/// A folder of its own for one test, removed when the test is done with it.
public struct ScratchFolder: Sendable {
    public let url: URL

    public init(_ label: String = "eventual-tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }

    /// A sub-folder's URL (not created): a device's data directory, say.
    public func folder(_ name: String) -> URL { url.appendingPathComponent(name, isDirectory: true) }
}

/// A test's own failure, with what went wrong.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
