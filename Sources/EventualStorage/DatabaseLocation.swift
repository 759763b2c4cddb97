import Foundation

/// Where the server keeps its data: an SQLite file (the default) or a PostgreSQL server.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    /// The default: `./data/eventual.sqlite`, created on first start.
    public static let defaultSQLite = DatabaseLocation.sqlite(path: "data/eventual.sqlite")

    /// Reads a `--database` value: a `postgres://` or `postgresql://` URL, or else a file path.
    public init(argument: String) {
        let lowered = argument.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            self = .postgres(url: argument)
        } else {
            self = .sqlite(path: argument)
        }
    }

    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let url):
            // NB: never print the password of a URL.
            guard var components = URLComponents(string: url) else { return "postgres" }
            if components.password != nil { components.password = "***" }
            return components.string ?? "postgres"
        }
    }
}
