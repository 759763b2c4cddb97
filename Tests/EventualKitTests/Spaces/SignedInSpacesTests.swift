import EventualAPI
import Foundation
import Testing
@testable import EventualKit

@Suite("A signed-in device's spaces: what an app calls")
struct SignedInSpacesTests {
    @Test(.timeLimit(.minutes(2)))
    func aSpaceCreatedOnTheDeviceIsSaidInTheStatusAndItsMembersAreReadOfflineFromTheLastCopy() async throws {
        try await withLiveServer { server, scratch in
            let user = try await registerUser(port: server.port!)
            let accounts = DeviceAccounts(configuration: testConfiguration(scratch.folder("phone"), server: server), app: testApp())
            let (session, _) = try await accounts.signIn(email: user.email, password: user.password)
            let device = try SignedInDevice(session: session, accounts: accounts,
                                            collections: [TableMirror(SyncCollections.pantryItems, table: "items")])
            // Given a space created on the device, before any sync
            let home = try await device.spaces.create(name: "Home")
            #expect(try device.spaces.list().map(\.name) == ["Home"])
            #expect(try await device.status(probe: false).entries.map(\.summary) == ["new space Home"])
            // When it syncs
            let report = try await device.sync()
            #expect(report.isComplete && report.calls == 1)
            // Then the device knows both spaces, and the server lists the person as the owner
            #expect(try device.spaces.list().map { "\($0.kind) \($0.name) \($0.role) \($0.owner ?? "-")" }
                    == ["personal Personal owner -", "shared Home owner \(session.username)"])
            let members = try await device.spaces.members(of: home)
            #expect(members.source == .network)
            #expect(members.value.owner == session.username && members.value.members.map(\.username) == [session.username])
            // And with no server, the last copy answers, saying its age
            let offline = Spaces(store: device.store, username: session.username,
                                 client: ServerLink(serverURL: unreachableServer) { nil }.client, patience: .seconds(5))
            let copy = try await offline.members(of: "Home")
            #expect(copy.source == .cache && copy.fetchedAt == members.fetchedAt && copy.value == members.value)
            await #expect(throws: CacheError.self) { try await offline.invitations() }
        }
    }
}
