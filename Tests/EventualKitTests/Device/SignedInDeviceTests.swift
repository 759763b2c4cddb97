import EventualAPI
import Foundation
import Synchronization
import Testing
@testable import EventualKit

@Suite("Signed-in device: one status, sync, retry and discard for every app")
struct SignedInDeviceTests {
    private static let shelve = "test.shelve"

    /// A device signed in on a live server, whose `test.shelve` calls the server refuses while `refusing` holds.
    private func signedIn(_ server: URL, _ scratch: ScratchFolder, refusing: Flag = Flag(false)) async throws -> SignedInDevice {
        let user = try await registerUser(port: server.port!)
        let accounts = DeviceAccounts(configuration: testConfiguration(scratch.folder("phone"), server: server), app: testApp())
        let (session, _) = try await accounts.signIn(email: user.email, password: user.password)
        let calls: [String: CallHandler] = [Self.shelve: { _ in
            if refusing.isSet { throw RemoteFailure.rejected(status: 422, message: "no such shelf") }
        }]
        return try SignedInDevice(session: session, accounts: accounts,
                                  collections: [TableMirror(SyncCollections.pantryItems, table: "items")], calls: calls)
    }

    @Test(.timeLimit(.minutes(2)))
    func theStatusSaysEachWaitingEntryInTheAppsWords() async throws {
        try await withLiveServer { server, scratch in
            let device = try await signedIn(server, scratch)
            try await addItem("Milk", to: device.store)
            try await device.store.write { tx in _ = try tx.enqueueCall(Self.shelve, payload: ["shelf": "top"]) }

            let status = try await device.status(probe: false)
            #expect(status.pending == 2 && status.failed == 0)
            #expect(status.entries.map(\.summary) == ["item Milk", "call \(Self.shelve)"])
            #expect(status.entries.map(\.state) == [.pending, .pending])
            #expect(status.entries[0].recordID != nil && status.entries[1].recordID == nil)
            #expect(status.entries[0].shortID == String(status.entries[0].id.suffix(8)))
            #expect(status.lastSyncAt == nil)

            #expect(try await device.sync().failure == nil)
            let synced = try await device.status(probe: false)
            #expect(synced.entries.isEmpty && synced.pending == 0)
            #expect(synced.lastSyncAt != nil)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aRefusedEntrySentAgainIsTakenOnceTheServerAgrees() async throws {
        try await withLiveServer { server, scratch in
            let refusing = Flag(true)
            let device = try await signedIn(server, scratch, refusing: refusing)
            try await device.store.write { tx in _ = try tx.enqueueCall(Self.shelve, payload: ["shelf": "top"]) }
            _ = try await device.sync()
            let refused = try #require(try await device.status(probe: false).entries.first)
            #expect(refused.state == .failed && refused.lastError == "no such shelf")

            let (again, stillRefused) = try await device.retry(refused.shortID)
            #expect(again.summary == "call \(Self.shelve)")
            #expect(stillRefused == .refused("no such shelf"))

            refusing.isSet = false
            let (_, outcome) = try await device.retry(refused.shortID)
            #expect(outcome == .sent)
            #expect(try device.outbox.entries().isEmpty)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aDiscardedEntryFirstUndoesWhatItDidOnThisDevice() async throws {
        try await withLiveServer { server, scratch in
            let device = try await signedIn(server, scratch, refusing: Flag(true))
            try await device.store.write { tx in _ = try tx.enqueueCall(Self.shelve, payload: ["shelf": "top"]) }
            _ = try await device.sync()
            let refused = try #require(try device.outbox.entries(state: .failed).first)
            let undone = Flag(false)

            let line = try await device.discard(refused.id) { entry in
                #expect(entry.id == refused.id)
                undone.isSet = true
            }
            #expect(line.summary == "call \(Self.shelve)" && line.state == .failed)
            #expect(undone.isSet)
            #expect(try device.outbox.entries().isEmpty)
            await #expect(throws: OutboxError.notFailed(refused.id.lowercased())) { try await device.discard(refused.id) }
        }
    }
}

/// A switch a test flips while the code under test reads it.
final class Flag: Sendable {
    private let value: Mutex<Bool>
    init(_ value: Bool) { self.value = Mutex(value) }
    var isSet: Bool {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
