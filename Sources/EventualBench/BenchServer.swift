import EventualAPI
import EventualKit
import EventualServer
import Foundation
import GRDB

/// A real server for a benchmark: on a free loopback port, started, and answering `/health`
/// before the benchmark's first request.
public enum BenchServer {
    /// Starts a server with `configuration` (its port replaced by a free one) and answers its URL
    /// and the task that runs it (cancel it to stop the server).
    public static func start(_ configuration: ServerConfiguration) async throws -> (url: URL, task: Task<Void, any Error>) {
        var configuration = configuration
        configuration.port = try freeLoopbackPort()
        let app = try await buildApplication(configuration)
        let task = Task { try await app.runService() }
        let url = URL(string: "http://127.0.0.1:\(configuration.port)")!
        let probe = ServerLink(serverURL: url) { nil }
        for _ in 0..<200 {
            if case .ok = (try? await probe.client.getHealth()) { return (url, task) }
            try await Task.sleep(for: .milliseconds(50))
        }
        task.cancel()
        throw BenchServerError(description: "the server at \(url) did not answer /health within 10 s")
    }

    /// A loopback port nothing listens on now: the system picks it for a socket bound to port 0.
    public static func freeLoopbackPort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw BenchServerError(description: "no socket for a free port") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        guard bound == 0 else { throw BenchServerError(description: "cannot bind a loopback socket") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

public struct BenchServerError: Error, CustomStringConvertible {
    public let description: String
}

/// The tables a benchmark's device mirrors, as the apps have them.
public enum BenchTables {
    /// The pantry's items: one column per field of `pantry_items`, and the space columns the
    /// mirror writes. NB: an engine pulls only the collections it is given a table for.
    public static let pantryItems = LocalMigration("bench items") { db in
        try db.create(table: "items") { table in
            table.primaryKey("id", .text)
            table.column("space_id", .text)
            table.column("changed_by", .text)
            for (name, field) in SyncCollections.pantryItems.fields.sorted(by: { $0.key < $1.key }) {
                switch field.type {
                case .string, .date: table.column(name, .text)
                case .integer: table.column(name, .integer)
                default: table.column(name, .double)
                }
            }
        }
    }
}
