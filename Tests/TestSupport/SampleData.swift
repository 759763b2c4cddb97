import Foundation

/// The real public data kept in the repository's `SampleData/` folder (Open Food Facts and
/// OpenStreetMap samples, ODbL; attribution in `SampleData/README.md`), found from this file's
/// place in the tree so that a clone alone runs the tests.
public enum SampleData {
    public static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // the repository
        .appendingPathComponent("SampleData")

    /// A file of the sample, by name (`off-products-1000-slim.csv`).
    public static func file(_ name: String) -> URL { folder.appendingPathComponent(name) }
}
