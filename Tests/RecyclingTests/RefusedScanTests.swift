import Foundation
import Testing
@testable import Recycling

/// A scan the server refuses never blocks the phone: `status` lists it with an id and the reason,
/// `retry ID` sends it again, `discard ID` drops it (and its photo), `sync` does not say "Synced",
/// and sign-out tells refused scans apart from those only waiting.
@Suite("Refused scans", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct RefusedScanTests {
    @Test func aRefusedScanCanBeRetriedOrDiscardedAndNeverBlocksSignOut() async throws {
        try await withLiveServer { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            // Given a photo scan refused by a server that cannot classify photos
            let photo = try plainPhoto(in: scratch.folder("camera"))
            #expect(try await phone.run(["scan", "--image", photo.path]).status == 1)
            // Then the status lists it with the id to act on and the server's reason
            let status = try #require(try json(try await phone.run(["status", "--json"])) as? [String: Any])
            let entry = try #require((status["entries"] as? [[String: Any]])?.first)
            let id = try #require(entry["shortId"] as? String)
            #expect(status["failed"] as? Int == 1 && entry["state"] as? String == "failed" && id.count == 8)
            #expect((entry["reason"] as? String)?.contains("cannot classify photos") == true, "\(entry)")
            // and sends the student to failures and settle (with no --take-theirs: a scan has no server version), in 80 columns
            let settle = "see `sustainu failures`, then `sustainu settle ID --keep-mine | --discard`"
            let text = try await phone.run(["status"], columns: 80)
            #expect(text.stdout.contains(id) && text.stdout.replacingOccurrences(of: "\n", with: " ").contains(settle), "\(text.stdout)")
            #expect(text.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 } && !text.stdout.contains("retry"), "\(text.stdout)")
            // And a sync does not call that synced
            let sync = try await phone.run(["sync"])
            #expect(sync.isOneLineError && sync.stderr.contains("1 scan or visit was refused by the server: ") && sync.stderr.contains("cannot classify photos"),
                    "\(sync.stdout)\(sync.stderr)")
            #expect(sync.stderr.contains("S" + settle.dropFirst()) && !sync.stderr.contains("retry"), "\(sync.stderr)")
            // And sign-out says what clears a refused scan, which a sync cannot
            let logout = try await phone.run(["logout"])
            #expect(logout.isOneLineError && logout.stderr.contains("refused by the server: " + settle), "\(logout.stderr)")
            #expect(!logout.stderr.contains("sync"), "\(logout.stderr)")
            // When the student retries it, the server refuses it again, and says so
            let retry = try await phone.run(["retry", id])
            #expect(retry.isOneLineError && retry.stderr.contains("refused the scan of a photo again"), "\(retry.stderr)")
            // And an id too short to be safe is a usage mistake
            #expect(try await phone.run(["retry", String(id.suffix(3))]).status == 64)
            // When a barcode scan waits offline, dropping only the refused ones is not enough to sign out
            #expect(try await phone.offline(["scan", "--barcode", SharedData.pastryBarcode]).status == 0)
            let partial = try await phone.offline(["logout", "--discard-refused"])
            #expect(partial.isOneLineError && partial.stderr.contains("1 scan or visit still waits to be sent"), "\(partial.stderr)")
            // When the student discards the refused scan
            let discard = try await phone.offline(["discard", id])
            #expect(discard.status == 0 && discard.stdout.contains("Dropped the refused scan of a photo"), "\(discard.stdout)\(discard.stderr)")
            // Then it and its photo are gone; the waiting scan stays
            let scans = try #require(try json(try await phone.offline(["scans", "--json"])) as? [[String: Any]])
            #expect(scans.count == 1 && scans.first?["state"] as? String == "waiting", "\(scans)")
            let photos = try FileManager.default.subpathsOfDirectory(atPath: scratch.folder("phone").path)
                .filter { $0.hasSuffix(".jpg") || ($0.contains("attachments/") && !$0.hasSuffix("attachments")) }
            #expect(photos.isEmpty, "\(photos)")
            // And a forced sign-out says the waiting scan is lost
            let forced = try await phone.offline(["logout", "--force"])
            #expect(forced.status == 0 && forced.stdout.contains("1 scan or visit that was waiting to be sent is lost"), "\(forced.stdout)\(forced.stderr)")
        }
    }
}

extension RefusedScanTests {
    /// A photo the server refuses (past the student's quota) fails its scan with the reason,
    /// rather than leaving the scan sent again for ever and every sync stopped behind it; a
    /// barcode scan after it still goes, and discarding the scan drops its photo too.
    @Test func aScanWhosePhotoIsRefusedIsRefusedWithItAndHoldsNothingUp() async throws {
        try await withLiveServer(configure: { $0.quotas.bytesPerUser = 20_000 }) { server, scratch in
            try await SharedData.seed(scratch)
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            // Given a photo larger than what the server leaves the student, scanned offline, and a barcode scan after it
            var bytes = Data([0xFF, 0xD8, 0xFF, 0xE0])
            bytes.append(Data((0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 8) }))
            let camera = scratch.folder("camera")
            try FileManager.default.createDirectory(at: camera, withIntermediateDirectories: true)
            let photo = camera.appendingPathComponent("big.jpg")
            try bytes.write(to: photo)
            #expect(try await phone.offline(["scan", "--image", photo.path]).status == 0)
            #expect(try await phone.offline(["scan", "--barcode", SharedData.pastryBarcode]).status == 0)
            // When it syncs
            let sync = try await phone.run(["sync"])
            // Then the scan is refused with its photo's reason, the barcode scan went, and nothing says "try again later"
            #expect(sync.status == 1 && sync.stdout.contains("the server took 1 and refused 1") && sync.stderr.contains("1 scan or visit was refused by the server: its photo was refused")
                    && !sync.stderr.contains("try again later"), "\(sync.stdout)\(sync.stderr)")
            let scans = try #require(try json(try await phone.run(["scans", "--json"])) as? [[String: Any]])
            #expect(scans.filter { $0["state"] as? String == "classified" }.count == 1, "\(scans)")
            #expect(scans.contains { $0["state"] as? String == "failed" && ($0["message"] as? String)?.hasPrefix("Its photo was refused: Quota reached") == true },
                    "\(scans)")
            let status = try #require(try json(try await phone.run(["status", "--json"])) as? [String: Any])
            #expect(status["pending"] as? Int == 0, "\(status)")
            let entries = try #require(status["entries"] as? [[String: Any]])
            let scan = try #require(entries.first { ($0["reason"] as? String)?.contains("Its photo was refused") == true }, "\(entries)")
            // When the student discards the scan, its refused photo goes with it, and a sync has nothing left to settle
            let discard = try await phone.run(["discard", try #require(scan["shortId"] as? String)])
            #expect(discard.status == 0, "\(discard.stderr)")
            let after = try #require(try json(try await phone.run(["status", "--json"])) as? [String: Any])
            #expect(after["failed"] as? Int == 0 && after["pending"] as? Int == 0, "\(after)")
            let attachments = try FileManager.default.subpathsOfDirectory(atPath: scratch.folder("phone").path)
                .filter { $0.contains("attachments/") && !$0.hasSuffix("attachments") }
            #expect(attachments.isEmpty, "\(attachments)")
        }
    }
}
