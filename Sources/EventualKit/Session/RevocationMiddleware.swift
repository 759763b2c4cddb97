import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// Sends the sign-outs this device could not send when they happened (offline), as soon as the
/// server answers any request: a token given up offline must not stay valid until the next
/// online sign-in, whoever uses the device and whatever the command.
struct RevocationMiddleware: ClientMiddleware {
    let vault: SessionVault
    let revoke: @Sendable (String) async throws -> Void
    private let sending = Sending()

    init(vault: SessionVault, revoke: @escaping @Sendable (String) async throws -> Void) {
        self.vault = vault
        self.revoke = revoke
    }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let answer = try await next(request, body, baseURL)
        // NB: one flush at a time; the requests that answer meanwhile leave it to the one in progress.
        if (try? vault.pendingRevocations().isEmpty) == false, sending.begin() {
            try? await vault.flushRevocations(revoke: revoke)
            sending.end()
        }
        return answer
    }

    private final class Sending: Sendable {
        private let busy = Mutex(false)
        func begin() -> Bool { busy.withLock { busy in defer { busy = true }; return !busy } }
        func end() { busy.withLock { $0 = false } }
    }
}
