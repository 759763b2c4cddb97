import CommandLineSupport
import EventualKit
import GRDB
import Testing

/// Issue 45: a device whose disk is full is told so, in one line, and never that it is offline.
@Suite("A full disk is said as a full disk")
struct FullDiskWordsTests {
    private let words = DeviceWords(command: "pantry", entries: "changes", one: "change(s)", many: "change(s)", record: "item")

    @Test func aWriteRefusedForLackOfRoomSaysNothingOfItWasSaved() {
        let text = Terminal.message(DatabaseError(resultCode: .SQLITE_FULL, message: "database or disk is full"))
        #expect(text == DeviceStorageFailure.fullAtWrite)
        #expect(text.contains("nothing of this was saved") && text.contains("what it held before is kept"))
        // And another failure of the database is still said as the database's
        #expect(Terminal.message(DatabaseError(resultCode: .SQLITE_CORRUPT, message: "database disk image is malformed"))
                == "The local database failed: database disk image is malformed")
    }

    @Test func aRoundThatCouldNotSaveSaysTheDeviceIsFullNeverOffline() {
        let failure = RemoteFailure.from(DatabaseError(resultCode: .SQLITE_FULL, message: "database or disk is full"))
        #expect(failure == .deviceStorage(DeviceStorageFailure.full))
        var report = SyncReport()
        report.failure = failure
        let waiting = words.waiting("the change", after: report) ?? ""
        #expect(waiting.hasPrefix("This device's storage is full") && waiting.contains("The change is saved and waits"), "\(waiting)")
        #expect(!waiting.contains("Offline") && !waiting.contains("connection"))
        let stopped = words.stopped(failure, sentBefore: 2).description
        #expect(stopped == "Sync stopped: \(DeviceStorageFailure.full) (2 sent before); what waits stays on this device and is sent once there is room")
    }
}
