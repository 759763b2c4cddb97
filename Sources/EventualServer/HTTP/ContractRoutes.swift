import EventualAPI
import HTTPTypes

/// Which methods each path of the server takes, read from the contract it serves (plus the few
/// routes outside it), so that a method a path does not have is answered 405 with `Allow`
/// rather than 404.
struct ContractRoutes: Sendable {
    private struct Route: Sendable {
        /// Path segments; nil stands for a `{parameter}`.
        let segments: [String?]
        var methods: [HTTPRequest.Method]
    }

    private let routes: [Route]

    /// The paths and methods under `paths:` in `openapi.yaml`, and `extra` routes.
    init(document: String, extra: [String: [HTTPRequest.Method]] = [:]) {
        var found: [(path: String, methods: [HTTPRequest.Method])] = []
        var inPaths = false
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty {
                inPaths = line.hasPrefix("paths:")
                continue
            }
            guard inPaths else { continue }
            // NB: the document's own layout: a path at two spaces, its methods at four.
            if line.hasPrefix("  /"), !line.hasPrefix("   "), line.hasSuffix(":") {
                found.append((String(line.dropFirst(2).dropLast()), []))
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":"), !found.isEmpty,
                      let method = HTTPRequest.Method(String(line.dropFirst(4).dropLast()).uppercased()),
                      Self.operationMethods.contains(method) {
                found[found.count - 1].methods.append(method)
            }
        }
        found += extra.map { ($0.key, $0.value) }
        routes = found.map { path, methods in
            Route(segments: Self.segments(path).map { $0.hasPrefix("{") ? nil : $0 }, methods: methods)
        }
    }

    /// The methods `path` takes (empty when no route has that path).
    func methods(for path: String) -> [HTTPRequest.Method] {
        let parts = Self.segments(path)
        var methods: [HTTPRequest.Method] = []
        for route in routes where route.segments.count == parts.count {
            if zip(route.segments, parts).allSatisfy({ $0.0 == nil ? !$0.1.isEmpty : $0.0 == $0.1 }) {
                methods += route.methods.filter { !methods.contains($0) }
            }
        }
        if methods.contains(.get), !methods.contains(.head) { methods.append(.head) }
        return methods
    }

    private static let operationMethods: Set<HTTPRequest.Method> = [.get, .put, .post, .delete, .options, .head, .patch, .trace]

    private static func segments(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
    }
}
