import EventualAPI
import Foundation
import NIOCore
import Testing
@testable import EventualServer

@Suite("Attachments: chunked, resumable, verified, deduplicated, counted, collected", .timeLimit(.minutes(5)))
struct AttachmentStoreTests {
    private typealias Fixture = AttachmentFixture
    private static let mebibyte = 1_048_576

    @Test(arguments: Backend.available)
    func aThreeMebibyteUploadInOneMebibyteChunksReadsBackByteForByte(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            // Given 3 MiB and a bit, sent in 1 MiB chunks
            let bytes = Fixture.jpeg(3 * Self.mebibyte + 123)
            let sha256 = Fixture.sha256(bytes)
            // When
            let status = try await fixture.upload(bytes)
            // Then it is complete, a JPEG, counted once, and reads back byte for byte
            #expect(status == AttachmentStatus(space: Fixture.alice, sha256: sha256, size: Int64(bytes.count), received: Int64(bytes.count),
                                               complete: true, contentType: .jpeg))
            #expect(try await fixture.usage(of: Fixture.alice) == Int64(bytes.count))
            #expect(try await fixture.download(sha256, in: Fixture.alice, by: Fixture.alice) == bytes)
            // And in four rows of chunks, none bigger than a chunk
            #expect(try await fixture.storedRows(sha256) == 1 + 4)
        }
    }

    @Test(arguments: Backend.available)
    func anAppendAtTheWrongOffsetIsToldWhatTheServerHas(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let bytes = Fixture.jpeg(1000)
            let sha256 = Fixture.sha256(bytes)
            _ = try await fixture.store.begin(sha256, size: 1000, in: Fixture.alice, by: Fixture.alice, byteQuota: .max, now: UnixMillis.now())
            let first = try await fixture.store.append(ByteBuffer(bytes: bytes[0..<400]), at: 0, to: sha256, in: Fixture.alice,
                                                      by: Fixture.alice, byteQuota: .max, now: UnixMillis.now())
            #expect(first.received == 400)
            // When the same chunk is sent again (its answer was lost), and one skips ahead
            for offset: Int64 in [0, 600] {
                await expectRefusal({ $0 == .offsetMismatch($0.message, received: 400) }) {
                    _ = try await fixture.store.append(ByteBuffer(bytes: bytes[Int(offset)..<Int(offset) + 100]), at: offset, to: sha256,
                                                       in: Fixture.alice, by: Fixture.alice, byteQuota: .max, now: UnixMillis.now())
                }
            }
            // And a chunk that would go past the declared size
            await expectRefusal({ if case .invalid = $0 { true } else { false } }) {
                _ = try await fixture.store.append(ByteBuffer(bytes: [UInt8](repeating: 1, count: 601)), at: 400, to: sha256,
                                                   in: Fixture.alice, by: Fixture.alice, byteQuota: .max, now: UnixMillis.now())
            }
            // Then the server still has 400 bytes, and a chunk for an upload never begun says so
            #expect(try await fixture.store.status(of: sha256, in: Fixture.alice, for: Fixture.alice).received == 400)
            await expectRefusal({ if case .uploadNotBegun = $0 { true } else { false } }) {
                _ = try await fixture.store.append(ByteBuffer(bytes: bytes), at: 0, to: String(repeating: "a", count: 64),
                                                   in: Fixture.alice, by: Fixture.alice, byteQuota: .max, now: UnixMillis.now())
            }
        }
    }

    @Test(arguments: Backend.available)
    func anUploadCutAtSixtyPercentResumesFromWhatTheServerHas(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            // Given 3 MiB of which the first 60% arrived, in 256 KiB chunks, before the connection went
            let bytes = Fixture.jpeg(3 * Self.mebibyte, seed: 7)
            let sha256 = Fixture.sha256(bytes)
            let cut = bytes.count * 6 / 10
            var status = try await fixture.store.begin(sha256, size: Int64(bytes.count), in: Fixture.alice, by: Fixture.alice,
                                                       byteQuota: .max, now: UnixMillis.now())
            while status.received + 262_144 <= cut {
                let from = Int(status.received)
                status = try await fixture.store.append(ByteBuffer(bytes: bytes[from..<from + 262_144]), at: status.received, to: sha256,
                                                        in: Fixture.alice, by: Fixture.alice, byteQuota: .max, now: UnixMillis.now())
            }
            // When the device asks (a begin again, or the status) and sends the rest from there
            let asked = try await fixture.store.begin(sha256, size: Int64(bytes.count), in: Fixture.alice, by: Fixture.alice,
                                                      byteQuota: .max, now: UnixMillis.now())
            #expect(try await fixture.store.status(of: sha256, in: Fixture.alice, for: Fixture.alice) == asked)
            #expect(asked.received == status.received && !asked.complete && asked.received > 0)
            let rest = Array(bytes[Int(asked.received)...])
            let done = try await fixture.store.append(ByteBuffer(bytes: rest), at: asked.received, to: sha256, in: Fixture.alice,
                                                      by: Fixture.alice, byteQuota: .max, now: UnixMillis.now())
            // Then the stored blob is exactly the bytes of that SHA-256
            #expect(done.complete)
            let stored = try await fixture.download(sha256, in: Fixture.alice, by: Fixture.alice)
            #expect(Fixture.sha256(stored) == sha256)
            #expect(stored == bytes)
        }
    }

    @Test(arguments: Backend.available)
    func bytesThatDoNotMatchTheirDigestAreRefusedDeletedAndNotCounted(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let bytes = Fixture.jpeg(5000)
            let claimed = Fixture.sha256(Fixture.jpeg(5000, seed: 2))
            await expectRefusal({ if case .digestMismatch = $0 { true } else { false } }) {
                _ = try await fixture.upload(bytes, chunk: 2000, sha256: claimed)
            }
            let (rows, usage) = (try await fixture.storedRows(claimed), try await fixture.usage(of: Fixture.alice))
            #expect(rows == 0 && usage == 0)
            await expectRefusal({ $0 == AttachmentStore.notUploaded }) {
                _ = try await fixture.store.content(of: claimed, in: Fixture.alice, for: Fixture.alice, range: nil)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aBlobIsStoredOncePerSpaceAndASecondMemberFindsItComplete(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            // Given bob's photo uploaded into Home
            let bytes = Fixture.jpeg(300_000, seed: 3)
            let sha256 = Fixture.sha256(bytes)
            try await fixture.upload(bytes, in: fixture.home, by: Fixture.bob)
            // When bob attaches it again, and alice (its owner) and carol (a viewer) ask for it
            let again = try await fixture.store.begin(sha256, size: 300_000, in: fixture.home, by: Fixture.bob, byteQuota: .max,
                                                      now: UnixMillis.now())
            let byAlice = try await fixture.store.begin(sha256, size: 300_000, in: fixture.home, by: Fixture.alice, byteQuota: .max,
                                                        now: UnixMillis.now())
            // Then nothing more is sent, it is counted once against Home's owner, and carol reads it
            #expect(again.complete && byAlice.complete && again.received == 300_000)
            #expect(try await fixture.usage(of: Fixture.alice) == 300_000)
            #expect(try await fixture.usage(of: Fixture.bob) == 0)
            #expect(try await fixture.download(sha256, in: fixture.home, by: Fixture.carol) == bytes)
            #expect(try await fixture.storedRows(sha256) == 2)
            // But carol, a viewer, uploads nothing, and bob's personal space does not have it
            await expectRefusal({ if case .notPermitted = $0 { true } else { false } }) {
                _ = try await fixture.store.begin(Fixture.sha256(Fixture.jpeg(10)), size: 10, in: fixture.home, by: Fixture.carol,
                                                  byteQuota: .max, now: UnixMillis.now())
            }
            #expect(try await !fixture.store.begin(sha256, size: 300_000, in: Fixture.bob, by: Fixture.bob, byteQuota: .max,
                                                   now: UnixMillis.now()).complete)
            // And someone outside Home is told they are not a member
            await expectRefusal({ if case .notFound = $0 { true } else { false } }) {
                _ = try await fixture.store.status(of: sha256, in: Fixture.bob, for: Fixture.alice)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aBlobCountsOnceAndHousekeepingFreesItOnceNoRecordRefersToIt(_ backend: Backend) async throws {
        var limits = AttachmentLimits()
        limits.gracePeriod = .milliseconds(1)
        try await Fixture.with(backend, limits: limits) { fixture in
            // Given one photo referred to by two records of Home, and an unfinished upload
            let bytes = Fixture.jpeg(200_000, seed: 4)
            let sha256 = Fixture.sha256(bytes)
            let reference = AttachmentReference(sha256: sha256)!
            try await fixture.upload(bytes, in: fixture.home, by: Fixture.bob)
            try await fixture.upload(bytes, in: fixture.home, by: Fixture.bob)
            try await fixture.record("r1", in: fixture.home, photo: reference.syncValue)
            try await fixture.record("r2", in: fixture.home, photo: reference.syncValue, deleted: true)
            let unfinished = Fixture.jpeg(5000, seed: 5)
            _ = try await fixture.store.begin(Fixture.sha256(unfinished), size: 5000, in: fixture.home, by: Fixture.bob, byteQuota: .max,
                                              now: UnixMillis.now())
            #expect(try await fixture.usage(of: Fixture.alice) == 200_000)
            try await Task.sleep(for: .milliseconds(5))
            // When housekeeping runs past the grace period
            let collected = try await fixture.store.collectGarbage(now: UnixMillis.now())
            // Then the unfinished upload went, the photo stays (a deleted record refers to it until it is purged)
            #expect(collected == 1)
            #expect(try await fixture.storedRows(Fixture.sha256(unfinished)) == 0)
            #expect(try await fixture.download(sha256, in: fixture.home, by: Fixture.alice) == bytes)
            // And a record holding the digest inside other text, or in another space, keeps nothing
            try await fixture.deleteRecords(in: fixture.home)
            try await fixture.record("r3", in: fixture.home, photo: .string("see \(reference) here"))
            try await fixture.record("r4", in: Fixture.alice, photo: reference.syncValue)
            // When housekeeping runs again
            #expect(try await fixture.store.collectGarbage(now: UnixMillis.now()) == 1)
            // Then the blob is gone and its bytes are given back to Home's owner
            #expect(try await fixture.storedRows(sha256) == 0)
            #expect(try await fixture.usage(of: Fixture.alice) == 0)
            await expectRefusal({ $0 == AttachmentStore.notUploaded }) {
                _ = try await fixture.store.status(of: sha256, in: fixture.home, for: Fixture.alice)
            }
        }
    }

    @Test(arguments: Backend.available)
    func housekeepingKeepsABlobWithinItsGracePeriodThoughNoRecordRefersToItYet(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let bytes = Fixture.jpeg(1000)
            try await fixture.upload(bytes)
            #expect(try await fixture.store.collectGarbage(now: UnixMillis.now() + 3_600_000) == 0)
            #expect(try await fixture.usage(of: Fixture.alice) == 1000)
            #expect(try await fixture.store.collectGarbage(now: UnixMillis.now() + 25 * 3_600_000) == 1)
            #expect(try await fixture.usage(of: Fixture.alice) == 0)
        }
    }

    @Test(arguments: Backend.available)
    func bytesThatAreNotAJpegPngOrHeicAreRefusedAtTheirFirstChunk(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let pdf = Array("%PDF-1.7 not a photo at all".utf8) + [UInt8](repeating: 0, count: 2000)
            await expectRefusal({ if case .unsupportedContent = $0 { true } else { false } }) {
                _ = try await fixture.upload(pdf, chunk: 1000)
            }
            let rows = try await fixture.storedRows(Fixture.sha256(pdf))
            #expect(rows == 0)
            // And a PNG and a HEIC are taken, told apart by their bytes, even when the first chunk is too short to tell
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 7, count: 100)
            let heic: [UInt8] = [0, 0, 0, 24] + Array("ftypheic".utf8) + [UInt8](repeating: 9, count: 100)
            let (pngStatus, heicStatus) = (try await fixture.upload(png, chunk: 5), try await fixture.upload(heic, chunk: 64))
            #expect(pngStatus.contentType == .png && heicStatus.contentType == .heic)
        }
    }

    @Test(arguments: Backend.available)
    func anEditorsUploadsUnderWayCountAgainstTheEditorNotTheOwner(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            let now = UnixMillis.now()
            // Given bob, an editor of alice's Home, begins two uploads there and sends no byte
            for seed in [21, 22] as [UInt64] {
                _ = try await fixture.store.begin(Fixture.sha256(Fixture.jpeg(400, seed: seed)), size: 400, in: fixture.home,
                                                  by: Fixture.bob, byteQuota: 1000, now: now)
            }
            // Then alice's own uploads still have her whole quota
            _ = try await fixture.store.begin(Fixture.sha256(Fixture.jpeg(900, seed: 23)), size: 900, in: Fixture.alice,
                                              by: Fixture.alice, byteQuota: 1000, now: now)
            // And bob's third is refused, against his own quota, in his words
            do {
                _ = try await fixture.store.begin(Fixture.sha256(Fixture.jpeg(400, seed: 24)), size: 400, in: fixture.home,
                                                  by: Fixture.bob, byteQuota: 1000, now: now)
                Issue.record("bob's third upload was begun past his quota")
            } catch let refusal as Refusal {
                guard case .quotaExceeded(let message) = refusal else { Issue.record("\(refusal)"); return }
                #expect(message.contains("you store"), "\(message)")
            }
            // And a blob larger than the owner's room is refused to the editor too, saying whose room it is
            await expectRefusal({ if case .quotaExceeded(let message) = $0 { message.contains("the owner of this space") } else { false } }) {
                _ = try await fixture.store.begin(Fixture.sha256(Fixture.jpeg(1100, seed: 25)), size: 1100, in: fixture.home,
                                                  by: Fixture.bob, byteQuota: 1000, now: now)
            }
        }
    }

    @Test(arguments: Backend.available)
    func theByteQuotaRefusesABeginItCannotHoldAndKeepsAnUploadIncompleteWhenItFillsMeanwhile(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            // A blob larger than the quota is refused before a byte is sent
            await expectRefusal({ if case .quotaExceeded = $0 { true } else { false } }) {
                _ = try await fixture.upload(Fixture.jpeg(2000), byteQuota: 1000)
            }
            // Two uploads begun together cannot both count on the same room
            let first = Fixture.jpeg(600, seed: 8), second = Fixture.jpeg(600, seed: 9)
            _ = try await fixture.store.begin(Fixture.sha256(first), size: 600, in: Fixture.alice, by: Fixture.alice, byteQuota: 1000,
                                              now: UnixMillis.now())
            await expectRefusal({ if case .quotaExceeded = $0 { true } else { false } }) {
                _ = try await fixture.store.begin(Fixture.sha256(second), size: 600, in: Fixture.alice, by: Fixture.alice,
                                                  byteQuota: 1000, now: UnixMillis.now())
            }
            // When the quota shrinks (the owner stored more meanwhile) the last chunk is refused and not kept
            _ = try await fixture.store.append(ByteBuffer(bytes: first[0..<300]), at: 0, to: Fixture.sha256(first), in: Fixture.alice,
                                               by: Fixture.alice, byteQuota: 1000, now: UnixMillis.now())
            await expectRefusal({ if case .quotaExceeded = $0 { true } else { false } }) {
                _ = try await fixture.store.append(ByteBuffer(bytes: first[300...]), at: 300, to: Fixture.sha256(first), in: Fixture.alice,
                                                   by: Fixture.alice, byteQuota: 500, now: UnixMillis.now())
            }
            #expect(try await fixture.store.status(of: Fixture.sha256(first), in: Fixture.alice, for: Fixture.alice).received == 300)
            #expect(try await fixture.usage(of: Fixture.alice) == 0)
            // Then, with room again, sending it once more completes it
            let done = try await fixture.store.append(ByteBuffer(bytes: first[300...]), at: 300, to: Fixture.sha256(first),
                                                      in: Fixture.alice, by: Fixture.alice, byteQuota: 1000, now: UnixMillis.now())
            #expect(done.complete)
            #expect(try await fixture.usage(of: Fixture.alice) == 600)
        }
    }

    @Test(arguments: Backend.available)
    func aSpacesBlobsMoveToItsNewOwnerAndGoWhenItsLastMemberLeaves(_ backend: Backend) async throws {
        try await Fixture.with(backend) { fixture in
            // Given bob's photo in alice's Home: it counts against alice
            let bytes = Fixture.jpeg(4000, seed: 6)
            try await fixture.upload(bytes, in: fixture.home, by: Fixture.bob)
            #expect(try await fixture.usage(of: Fixture.alice) == 4000)
            // When alice hands Home over to bob, it counts against him
            let spaces = SpaceStore(database: fixture.database), home = fixture.home
            _ = try await fixture.database.transaction { sql in
                try await spaces.setRole(.owner, of: Fixture.bob, in: home, by: Fixture.alice, on: sql)
            }
            #expect(try await fixture.usage(of: Fixture.alice) == 0)
            #expect(try await fixture.usage(of: Fixture.bob) == 4000)
            // When everyone leaves, bob last, the blob goes with the space's records and its bytes with it
            try await fixture.database.transaction { sql in
                for person in [Fixture.alice, Fixture.carol, Fixture.bob] {
                    try await spaces.remove(person, from: home, by: person, now: UnixMillis.now(), on: sql)
                }
            }
            #expect(try await fixture.usage(of: Fixture.bob) == 0)
            let rows = try await fixture.storedRows(Fixture.sha256(bytes))
            #expect(rows == 0)
        }
    }

    @Test func aRangeHeaderIsReadAsRFC9110SaysOrIgnored() throws {
        #expect(try AttachmentRange.parse(nil, size: 100) == .whole)
        #expect(try AttachmentRange.parse("bytes=10-", size: 100) == .part(first: 10, last: 99))
        #expect(try AttachmentRange.parse("bytes=10-19", size: 100) == .part(first: 10, last: 19))
        #expect(try AttachmentRange.parse("bytes=90-500", size: 100) == .part(first: 90, last: 99))
        #expect(try AttachmentRange.parse("bytes=-30", size: 100) == .part(first: 70, last: 99))
        #expect(try AttachmentRange.parse("bytes=0-4,10-", size: 100) == .part(first: 0, last: 4))
        for ignored in ["items=1-2", "bytes=abc", "bytes=5-2", "bytes=", "bytes=-0"] {
            #expect(try AttachmentRange.parse(ignored, size: 100) == .whole, "\(ignored)")
        }
        #expect(throws: Refusal.self) { try AttachmentRange.parse("bytes=100-", size: 100) }
        // Positions past Int64 are positions all the same: past the end, or the last byte
        #expect(throws: Refusal.self) { try AttachmentRange.parse("bytes=9223372036854775807-", size: 100) }
        #expect(throws: Refusal.self) { try AttachmentRange.parse("bytes=99999999999999999999999-", size: 100) }
        #expect(try AttachmentRange.parse("bytes=0-9223372036854775807", size: 100) == .part(first: 0, last: 99))
        #expect(try AttachmentRange.parse("bytes=0-99999999999999999999999", size: 100) == .part(first: 0, last: 99))
        #expect(try AttachmentRange.parse("bytes=-99999999999999999999999", size: 100) == .part(first: 0, last: 99))
    }

    @Test func aDownloadOfARangeReadsOnlyTheChunksItCovers() async throws {
        try await Fixture.with(.sqlite) { fixture in
            let bytes = Fixture.jpeg(10_000)
            let sha256 = Fixture.sha256(bytes)
            try await fixture.upload(bytes, chunk: 3000)
            let content = try await fixture.store.content(of: sha256, in: Fixture.alice, for: Fixture.alice, range: "bytes=4000-")
            #expect(content.bytes.pieces.map(\.chunkOffset) == [3000, 6000, 9000])
            #expect(try await fixture.download(sha256, in: Fixture.alice, by: Fixture.alice, range: "bytes=4000-6500") == Array(bytes[4000...6500]))
        }
    }
}
