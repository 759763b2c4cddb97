import EventualAPI
import Foundation
import OpenAPIRuntime
import Testing
@testable import EventualKit

/// A failed request is said in one short sentence built from its kind: never the generated
/// client's error, whose description holds the request body (a password).
@Suite("Remote failures said for people", .timeLimit(.minutes(2)))
struct RemoteFailureTests {
    static let password = "very-secret-password-42"

    /// Registers through the generated client and returns the sentence of the failure.
    func registrationFailure(at server: URL, firstByte: Duration = .seconds(1)) async throws -> (RemoteFailure, String) {
        // NB: a connect deadline of 10 s: these servers are on loopback and always take the
        // connection, but at the start of the whole suite on two cores a 2 s deadline ran out
        // before the client's event loop saw it done ("No connection … within 2 s").
        let link = ServerLink(serverURL: server, timeout: .seconds(10),
                              timeouts: ServerLink.Timeouts(connect: .seconds(10), firstByte: firstByte)) { "token-abc-123" }
        do {
            let answer = try await link.client.register(body: .json(.init(username: "alice", email: "a@example.com", password: Self.password)))
            guard case .undocumented(let status, let payload) = answer else { throw TestFailure("registered: \(answer)") }
            let failure = await remoteFailure(status, payload)
            return (failure, failure.description)
        } catch {
            let failure = RemoteFailure.from(error)
            return (failure, failure.description)
        }
    }

    func expectShortAndClean(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!text.contains(Self.password), "\(text)", sourceLocation: sourceLocation)
        for leak in ["token-abc-123", "Bearer", "Input", "operationID", "requestBody", "Client error", "Middleware", ".swift", "/Sources/"] {
            #expect(!text.contains(leak), "\(leak) in \(text)", sourceLocation: sourceLocation)
        }
        #expect(!text.contains("\n"), sourceLocation: sourceLocation)
        #expect(text.count < 160, "\(text.count) characters: \(text)", sourceLocation: sourceLocation)
    }

    @Test func aServerWhoseAddressIsUnknownIsNamedOnceAndAnEndedSignInSaysWhatToDo() {
        // A read's own deadline knows no address: "The server", never "The server at the server"
        #expect(RemoteFailure.from(DeadlineExceeded()).description == "The server took too long to answer")
        #expect(RemoteFailure.from(DeadlineExceeded(), server: URL(string: "http://127.0.0.1:8080/v1"), timeouts: nil).description
            == "The server at http://127.0.0.1:8080 took too long to answer")
        // A 401 is said as what a person does about it, whatever the server's words for developers
        for words in ["Missing access token: send 'Authorization: Bearer <token>' from POST /auth/login", "sign in again to sync", ""] {
            let said = RemoteFailure.unauthorized(words).description
            #expect(said.hasSuffix("sign in again") && !said.contains("Bearer") && !said.contains("to sync"), "\(said)")
        }
    }

    @Test func aSilentServerIsSaidWithoutTheRequest() async throws {
        try await withSilentServer { silent in
            let (failure, text) = try await registrationFailure(at: silent)
            #expect(failure == .unreachable(text))
            #expect(text.contains("accepted the connection but did not answer in 1 s"), "\(text)")
            expectShortAndClean(text)
        }
    }

    @Test func aRefusedConnectionIsSaidWithoutTheRequest() async throws {
        let (failure, text) = try await registrationFailure(at: unreachableServer)
        #expect(failure == .unreachable(text))
        #expect(text.contains("connection refused"), "\(text)")
        expectShortAndClean(text)
    }

    @Test func aServerErrorIsSaidByItsStatus() async throws {
        let fake = try await FakeVisionServer.start(.raw(status: 500, body: #"{"error":true,"reason":"boom"}"#))
        defer { Task { await fake.stop() } }
        let server = try #require(URL(string: "http://127.0.0.1:\(fake.baseURL.port!)"))
        let (failure, text) = try await registrationFailure(at: server)
        #expect(failure == .transient(status: 500, message: "HTTP 500"))
        #expect(text == "The server is busy or failing (HTTP 500)")
        expectShortAndClean(text)
    }

    @Test func aLimitTheServerExplainsIsSaidInItsWordsAndABareOneByItsStatus() {
        #expect(RemoteFailure.status(429, message: "Too many failed sign-ins; try again in 7 min").description
                == "Too many failed sign-ins; try again in 7 min")
        #expect(RemoteFailure.status(429, message: "HTTP 429").description == "The server is busy or failing (HTTP 429)")
        #expect(RemoteFailure.status(503, message: "Down for maintenance").description
                == "The server is busy or failing (HTTP 503): Down for maintenance")
    }

    @Test func aClientErrorWithAnUnreadableCauseIsNeverPrintedWhole() async throws {
        // Given what the generated client throws when the transport fails with an error it knows nothing of
        struct Strange: Error, CustomStringConvertible { var description: String { "at /build/Sources/x.swift:12 \(RemoteFailureTests.password)" } }
        let error = ClientError(operationID: "register", operationInput: RemoteFailureTests.password, causeDescription: "Transport threw an error.",
                                underlyingError: Strange())
        // Then its sentence says only that there was no connection
        let text = RemoteFailure.from(error).description
        #expect(text == "No connection to the server")
        expectShortAndClean(text)
    }
}
