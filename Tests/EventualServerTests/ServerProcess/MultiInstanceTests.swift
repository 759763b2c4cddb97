import Foundation
import HummingbirdTesting
import Testing
@testable import EventualServer

@Suite("Two server processes on one database", .timeLimit(.minutes(2)))
struct MultiInstanceTests {
    @Test(arguments: Backend.available)
    func tokensFromOneInstanceWorkOnTheOther(_ backend: Backend) async throws {
        // NB: with no tables, so that both instances start by migrating it at once
        let scratch = try await ScratchDatabase.make(backend, emptyOfTables: true)
        defer { Task { await scratch.remove() } }
        let first = try await buildApplication(testConfiguration(scratch.location))
        let second = try await buildApplication(testConfiguration(scratch.location))
        try await first.test(.live) { firstClient in
            try await second.test(.live) { secondClient in
                let one = API(client: firstClient), two = API(client: secondClient)
                // Given a user who logs in on the first instance
                let account = try await one.signUp()
                // Then the second accepts the access token
                #expect(try await two.send(.get, "/users/me", headers: account.bearer).status == .ok)
                // And a session token from the first posts a product through the second
                let barcode = Barcodes.unique()
                let token = try await one.sessionToken(barcode, as: account)
                let posted = try await two.postProduct(barcode, name: "Shared", token: token, as: account)
                #expect(posted.status == .created, "\(posted.text)")
                #expect(try await one.products(barcode, as: account).map(\.name) == ["Shared"])
                // And a logout on the second is honoured by the first at once
                #expect(try await two.send(.post, "/auth/logout", headers: account.bearer).status == .noContent)
                #expect(try await one.send(.get, "/users/me", headers: account.bearer).status == .unauthorized)
            }
        }
    }
}
