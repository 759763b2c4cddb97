import EventualAPI
import Foundation
import HTTPTypes
import NIOCore
import Testing
@testable import EventualServer

/// What a hostile probe of the newest endpoints found, each through a real server on a loopback
/// port: no request stops the server, and no number from the wire makes a value no device can hold.
@Suite("A hostile request never stops the server", .timeLimit(.minutes(3)))
struct HostileProbeTests {
    @Test(arguments: Backend.available)
    func anUnsignedBeginOfInt64MaxBytesIsA400AndTheServerLivesOn(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            // Given no account at all
            let sha256 = String(repeating: "a", count: 64)
            for size in ["9223372036854775807", "922337203685477581", "-9223372036854775808", "1e308"] {
                // When a begin claims a size past every limit
                let answer = try await api.send(.put, "/v1/attachments/\(sha256)", json: #"{"size":\#(size)}"#)
                // Then it is a 400 that says the limit, and the server still answers
                #expect(answer.status == .badRequest, "\(size): \(answer.text)")
                #expect(try answer.error().message.contains("size must be"), "\(answer.text)")
                #expect(try await api.send(.get, "/health").status == .ok)
            }
        }
    }

    @Test(arguments: Backend.available)
    func anAppendAtAnOffsetNearInt64MaxIsRefusedAndTheServerLivesOn(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            // Given an upload of 21 bytes begun in one's own space
            let account = try await api.signUp("prober")
            let bytes = AttachmentFixture.jpeg(21)
            let sha256 = AttachmentFixture.sha256(bytes)
            #expect(try await api.beginAttachment(sha256, size: 21, as: account).status == .ok)
            // When a chunk claims to start near Int64.max
            let answer = try await api.appendAttachment(sha256, offset: 9_223_372_036_854_775_800, [1, 2, 3], as: account)
            // Then it is a 400, the upload is untouched, and the server still answers
            #expect(answer.status == .badRequest, "\(answer.text)")
            #expect(try await api.send(.get, "/health").status == .ok)
            let status = try await api.attachmentStatus(sha256, as: account).decode(AttachmentStatusJSON.self)
            #expect(status.received == 0)
            // And the whole blob still goes in from where it stands
            #expect(try await api.uploaded(bytes, chunk: 8, as: account).complete)
        }
    }

    @Test(arguments: Backend.available)
    func anOffsetThatIsNoWholeNumberIsRefusedByItsName(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            let account = try await api.signUp("offsets")
            let sha256 = String(repeating: "b", count: 64)
            for offset in ["1e3", "0x0", "+0", "1.0", "NaN", "", "%200"] {
                let answer = try await api.appendAttachment(sha256, offsetText: offset, [1, 2, 3], as: account)
                #expect(answer.status == .badRequest, "\(offset): \(answer.text)")
                #expect(try answer.error().message.contains("offset must be a whole number"), "\(offset): \(answer.text)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func theStoreItselfRefusesAnOffsetWhoseEndOverflows(_ backend: Backend) async throws {
        // NB: under the contract's gate, straight to the store: a caller that skips the gate must not trap either.
        try await AttachmentFixture.with(backend) { fixture in
            let bytes = AttachmentFixture.jpeg(21)
            let sha256 = AttachmentFixture.sha256(bytes)
            _ = try await fixture.store.begin(sha256, size: 21, in: AttachmentFixture.alice, by: AttachmentFixture.alice,
                                              byteQuota: .max, now: UnixMillis.now())
            for offset in [Int64.max, Int64.max - 1, 21, 22] {
                await expectRefusal({ if case .offsetMismatch = $0 { true } else { false } }) {
                    _ = try await fixture.store.append(ByteBuffer(bytes: [1, 2, 3]), at: offset, to: sha256, in: AttachmentFixture.alice,
                                                       by: AttachmentFixture.alice, byteQuota: .max, now: UnixMillis.now())
                }
            }
            // A chunk that starts where the upload stands but runs past its end is refused as such
            await expectRefusal({ if case .invalid = $0 { true } else { false } }) {
                _ = try await fixture.store.append(ByteBuffer(bytes: [UInt8](repeating: 0xFF, count: 22)), at: 0, to: sha256,
                                                   in: AttachmentFixture.alice, by: AttachmentFixture.alice, byteQuota: .max, now: UnixMillis.now())
            }
        }
    }

    /// One rule on the device and on the server (rounded up): a quota message names a file's size
    /// as the device did ("78 bytes", not "1 KiB" here and "0.0 MiB" there).
    @Test func sizesAreSaidForEveryInt64() {
        #expect(ByteCount.text(Int64.max) == "8796093022208.0 MiB")
        #expect(ByteCount.text(Int64.min) == "-8796093022208.0 MiB")
        #expect(ByteCount.text(0) == "0 bytes" && ByteCount.text(1) == "1 byte" && ByteCount.text(78) == "78 bytes")
        #expect(ByteCount.text(1023) == "1023 bytes" && ByteCount.text(1024) == "1 KiB" && ByteCount.text(1025) == "2 KiB")
        #expect(ByteCount.text(20_971_520) == "20.0 MiB")
        #expect(ByteCount.text(1_048_576 + 524_288) == "1.5 MiB")
        #expect(ByteCount.text(1_048_575) == "1.0 MiB")
        #expect(ByteCount.text(-1_048_576) == "-1.0 MiB")
    }

    @Test(arguments: Backend.available)
    func twoHugeDeltasCannotMakeACounterNoDeviceCanHold(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            // Given a household item with a quantity
            let account = try await api.signUp("poisoner")
            _ = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-9000), fields: pantryItem(["quantity": 1]))],
                                     as: account)
            // When deltas of 1e308 are pushed, the contract refuses them before anything is merged
            let huge = try await api.push([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-8000, node: "a"), deltas: ["quantity": 1e308])],
                                          as: account)
            #expect(huge.status == .badRequest, "\(huge.text)")
            #expect(try huge.error().message.contains("changes[0].deltas.quantity"), "\(huge.text)")
            // And two deltas each within range whose sum would leave it: the first applies, the second is refused with a code
            let largest = Double(SyncValue.largestMagnitude)
            let first = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-7000, node: "a"), deltas: ["quantity": largest - 1])],
                                             as: account)
            #expect(first.map(\.status) == ["applied"])
            let second = try await api.push([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-6000, node: "b"), deltas: ["quantity": largest])],
                                            as: account)
            #expect(second.status == .ok, "\(second.text)")
            #expect(second.text.contains("\"rejected\"") && second.text.contains("out_of_range"), "\(second.text)")
            // Then every member pulls a finite quantity, never a null
            let quantity = try await api.pulledRecords(as: account)["milk"]?.fields["quantity"]
            #expect(quantity == .integer(SyncValue.largestMagnitude), "\(String(describing: quantity))")
        }
    }

    @Test(arguments: Backend.available)
    func anIdempotencyKeyWithAControlByteIsRefused(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            // Given a registration whose Idempotency-Key holds a C1 control byte (0x85), as raw bytes
            var headers = HTTPFields()
            headers.append(HTTPField(name: HTTPField.Name("Idempotency-Key")!, value: [UInt8]("key".utf8) + [0x85] + [UInt8]("x".utf8)))
            let answer = try await api.send(.post, "/users", headers: headers,
                                            json: #"{"username":"c1probe","email":"c1probe@example.com","password":"correct horse"}"#)
            // Then it is a 400 naming the header, and no account was made
            #expect(answer.status == .badRequest, "\(answer.text)")
            #expect(try answer.error().message.contains("Idempotency-Key"), "\(answer.text)")
            #expect(try await api.login(email: "c1probe@example.com", password: "correct horse").status == .unauthorized)
        }
    }

    @Test(arguments: Backend.available)
    func theServerHoldsTheLengthsTheContractStatesForRangeAndCollection(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            let account = try await api.signUp("lengths")
            let bytes = AttachmentFixture.jpeg(300)
            _ = try await api.uploaded(bytes, chunk: 100, as: account)
            // A Range of 200 characters is read (here: ignored as no range), one of 201 is a 400
            let longest = "bytes=0-" + String(repeating: "9", count: 192)
            #expect(longest.count == 200)
            #expect(try await api.attachmentContent(AttachmentFixture.sha256(bytes), range: longest, as: account).status == .partialContent)
            let tooLong = try await api.attachmentContent(AttachmentFixture.sha256(bytes), range: longest + "9", as: account)
            #expect(tooLong.status == .badRequest, "\(tooLong.text)")
            #expect(try tooLong.error().message.contains("Range must be at most 200"))
            // A collection value as long as the contract allows is read; one longer is a 400
            let bound = String(repeating: "x", count: PullSubscription.maxBoundLength)
            let longestPart = "pantry_items:" + String(repeating: "f", count: 51) + ">=" + bound
            let fieldPart = String(repeating: "a", count: 64)
            let atTheLimit = String(repeating: "c", count: 64) + ":" + fieldPart + ">=" + bound
            #expect(atTheLimit.count == PullSubscription.longestPart)
            let encode = { (value: String) in value.replacingOccurrences(of: ">=", with: "%3E%3D") }
            #expect(try await api.send(.get, "/v1/sync/pull?collection=\(encode(longestPart))", headers: account.bearer).status == .ok)
            let past = try await api.send(.get, "/v1/sync/pull?collection=\(encode(atTheLimit))x", headers: account.bearer)
            #expect(past.status == .badRequest, "\(past.text)")
        }
    }

    @Test(arguments: Backend.available)
    func aDownloadedBlobCarriesNosniff(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api in
            let account = try await api.signUp("sniffer")
            let bytes = AttachmentFixture.jpeg(300)
            _ = try await api.uploaded(bytes, chunk: 100, as: account)
            let content = try await api.attachmentContent(AttachmentFixture.sha256(bytes), as: account)
            #expect(content.status == .ok)
            #expect(content.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
        }
    }

    @Test func theContractDocumentsTheSignInLockoutAndTheInvitationLimits() throws {
        let contract = try ContractLimits.served()
        for id in ["login", "register", "verifyEmail", "inviteToSpace", "recordEvents"] {
            #expect(contract.operations[id]?.statuses.contains(429) == true, "\(id)")
        }
        #expect(contract.operations["syncPull"]?.parameters.first { $0.name == "collection" }?.schema.items?.maxLength
            == PullSubscription.longestPart)
        #expect(contract.operations["getAttachmentContent"]?.parameters.first { $0.name == "Range" }?.schema.maxLength != nil)
    }
}

@Suite("Insights read only the times a record may hold")
struct InsightsBoundsTests {
    @Test func aTransactionStoredWithATimeNoRecordMayHoldIsLeftOutNotATrap() {
        // Given transactions whose times were stored before records were bounded, and one in range
        let now = UnixMillis.now()
        let fields: (Int64) -> [String: SyncValue] = { at in
            ["kind": "expense", "amountMinor": 1_250, "currency": "EUR", "category": "food", "occurredAt": .integer(at)]
        }
        let records = [Int64.min, Int64.max, -SyncValue.largestMagnitude - 1, now - 3_600_000].enumerated()
            .compactMap { SpentRecord(id: "t\($0.offset)", fields: fields($0.element)) }
        // Then only the one in range is read, and the findings are computed without a trap
        #expect(records.map(\.id) == ["t3"])
        _ = Insights.find(records + records.map { SpentRecord(id: $0.id + "b", amountMinor: 99_999, category: "food", occurredAt: $0.occurredAt) },
                          now: now)
    }
}
