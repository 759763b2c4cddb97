import Foundation

/// Where an app keeps its files on a device: a folder for secrets, and one folder per person
/// (which sign-out and a sign-in as someone else remove whole).
public struct DeviceFolders: Sendable {
    public let dataDirectory: URL

    public init(_ dataDirectory: URL) {
        self.dataDirectory = dataDirectory
    }

    public var secrets: URL { dataDirectory.appendingPathComponent("secrets", isDirectory: true) }

    /// The folder of a person's data.
    public func user(_ userID: String) -> URL {
        // NB: the id comes from the server; keep only safe characters for a folder name.
        let safe = String(userID.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) || $0 == "-" }.map(Character.init))
        return dataDirectory.appendingPathComponent("users", isDirectory: true).appendingPathComponent(safe.isEmpty ? "user" : safe)
    }
}
