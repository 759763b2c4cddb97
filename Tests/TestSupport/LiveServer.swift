import EventualServer
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix

/// Runs `body` against a real server on a loopback port, on a fresh SQLite database in a scratch
/// folder (also handed to `body`), with the test configuration adjusted by `configure`.
public func withLiveServer<T: Sendable>(
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @Sendable (_ server: URL, _ scratch: ScratchFolder) async throws -> T
) async throws -> T {
    let scratch = try ScratchFolder()
    defer { scratch.remove() }
    var configuration = ServerConfiguration(
        hostname: "127.0.0.1", port: 0, database: .sqlite(path: scratch.url.appendingPathComponent("server.sqlite").path),
        logLevel: .critical, bcryptCost: 4
    )
    configure(&configuration)
    let app = try await buildApplication(configuration)
    return try await app.test(.live) { client in
        guard let port = client.port else { throw TestFailure("the live server has no port") }
        return try await body(URL(string: "http://127.0.0.1:\(port)")!, scratch)
    }
}

/// Like `withLiveServer(configure:_:)`, on a fresh database of `backend` (PostgreSQL when
/// `DATABASE_URL` is set), removed afterwards.
public func withLiveServer<T: Sendable>(
    on backend: Backend,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @Sendable (_ server: URL, _ scratch: ScratchFolder) async throws -> T
) async throws -> T {
    let database = try await ScratchDatabase.make(backend)
    do {
        let value = try await withLiveServer(configure: { configuration in
            configuration.database = database.location
            configure(&configuration)
        }, body)
        await database.remove()
        return value
    } catch {
        await database.remove()
        throw error
    }
}

/// A loopback address where nothing listens: the server as seen from a basement.
public let unreachableServer: URL = {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    close(fd)
    // NB: the port was free a moment ago and nothing listens on it now: connections are refused.
    return URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
}()

/// A server that accepts connections and reads what it is sent but never answers: the
/// crowded building where the request leaves and nothing comes back.
public final class SilentServer: Sendable {
    public let url: URL
    private let listener: any Channel

    private init(listener: any Channel) {
        self.listener = listener
        url = URL(string: "http://127.0.0.1:\(listener.localAddress!.port!)")!
    }

    public static func start() async throws -> SilentServer {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return SilentServer(listener: listener)
    }

    public func stop() async {
        try? await listener.close()
    }
}

/// Runs `body` with a silent server, stopped afterwards.
public func withSilentServer<T: Sendable>(_ body: @Sendable (_ server: URL) async throws -> T) async throws -> T {
    let server = try await SilentServer.start()
    do {
        let value = try await body(server.url)
        await server.stop()
        return value
    } catch {
        await server.stop()
        throw error
    }
}
