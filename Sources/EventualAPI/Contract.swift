import Foundation

/// The wire contract this module was generated from, as served at `GET /openapi.yaml`.
public enum Contract {
    /// The bytes of `openapi.yaml`.
    public static func document() throws -> Data {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try Data(contentsOf: url)
    }
}
