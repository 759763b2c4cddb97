import EventualAPI
import Foundation
import HTTPTypes
import Testing
@testable import EventualServer

@Suite("A method a path does not have is 405, not 404", .timeLimit(.minutes(2)))
struct MethodNotAllowedTests {
    @Test(arguments: [
        (HTTPRequest.Method.trace, "/votes", "POST"),
        (.put, "/products", "GET, POST, HEAD"),
        (.get, "/v1/sync/push", "POST"),
        (.post, "/products/abc", "DELETE"),
        (.delete, "/health", "GET, HEAD"),
        (.post, "/openapi.yaml", "GET, HEAD"),
    ])
    func aKnownPathAnswers405WithTheMethodsItTakes(_ method: HTTPRequest.Method, _ path: String, _ allow: String) async throws {
        try await withServer(.sqlite) { api in
            let answer = try await api.send(method, path)
            #expect(answer.status == .methodNotAllowed)
            #expect(answer.headers[.allow] == allow)
            #expect(try answer.error().message.contains(allow))
        }
    }

    @Test func anUnknownPathIsStill404() async throws {
        try await withServer(.sqlite) { api in
            let unknown = try await api.send(.trace, "/no/such/path")
            let tooDeep = try await api.send(.get, "/products/abc/extra")
            #expect(unknown.status == .notFound)
            #expect(tooDeep.status == .notFound)
        }
    }

    @Test func everyPathOfTheContractIsKnown() throws {
        let routes = ContractRoutes(document: String(decoding: try Contract.document(), as: UTF8.self))
        #expect(routes.methods(for: "/users") == [.post])
        #expect(routes.methods(for: "/users/me") == [.get, .head])
        #expect(routes.methods(for: "/products/123e4567") == [.delete])
        #expect(routes.methods(for: "/v1/sync/pull") == [.get, .head])
        #expect(routes.methods(for: "/products/") == [])
    }
}
