import EventualAPI
import Foundation
import HummingbirdBcrypt
import Testing
@testable import EventualServer

/// The server's field rules as `openapi.yaml` states them: lengths in code points (as JSON Schema
/// counts them), an email kept as sent, long passwords that count to their last character.
@Suite("Field rules are exactly the contract's", .timeLimit(.minutes(2)))
struct ContractRulesTests {
    /// "é" as `e` and a combining acute accent: one character to a person, two code points.
    static let combiningE = "e\u{301}"

    // MARK: Passwords

    @Test(arguments: Backend.available)
    func aPasswordOfSeventyTwoCharactersOverSeventyTwoBytesRegistersAndEveryCharacterCounts(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given a password of 72 characters, 144 bytes in UTF-8
            let password = String(repeating: "é", count: 72)
            let registered = try await api.send(.post, "/users", json: registration("long_pw", "long.pw@example.com", password))
            #expect(registered.status == .created, "\(registered.text)")
            // When it signs in, and when a password differing only in its last character tries
            let right = try await api.send(.post, "/auth/login", json: credentials("long.pw@example.com", password))
            let wrongEnd = try await api.send(.post, "/auth/login",
                                              json: credentials("long.pw@example.com", String(repeating: "é", count: 71) + "e"))
            // Then only the exact password signs in: bcrypt's 72-byte limit no longer hides the end
            #expect(right.status == .created, "\(right.text)")
            #expect(wrongEnd.status == .unauthorized, "\(wrongEnd.text)")
        }
    }

    @Test(arguments: Backend.available)
    func aPasswordIsEightToSeventyTwoCodePoints(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given passwords just outside the bounds, counted in code points
            let tooLong = String(repeating: "é", count: 73)
            let tooShort = String(repeating: Self.combiningE, count: 3) + "a"  // 7 code points, 4 characters
            let eightCodePoints = String(repeating: Self.combiningE, count: 4)  // 8 code points, 4 characters
            // When they register
            let long = try await api.send(.post, "/users", json: registration("pw_long", "pw.long@example.com", tooLong))
            let short = try await api.send(.post, "/users", json: registration("pw_short", "pw.short@example.com", tooShort))
            let fine = try await api.send(.post, "/users", json: registration("pw_fine", "pw.fine@example.com", eightCodePoints))
            // Then
            for refused in [long, short] {
                #expect(refused.status == .badRequest)
                #expect(try refused.error().message == "password must be 8 to 72 characters long")
            }
            #expect(fine.status == .created, "\(fine.text)")
        }
    }

    @Test func passwordsBcryptReadsWholeHashAsBeforeSoExistingAccountsSignIn() async throws {
        let hasher = try await PasswordHasher.make(cost: 4, threads: 1)
        // Given a hash made the old way, straight from bcrypt, of a 72-byte password
        let old = String(repeating: "p", count: 72)
        let oldHash = Bcrypt.hash(old, cost: 4)
        // When the hasher verifies it, and hashes a longer one
        let stillSignsIn = try await hasher.verify(old, against: oldHash)
        let long = String(repeating: "p", count: 100)
        let longHash = try await hasher.hash(long)
        // Then the old account signs in, and a long password is bcrypted through SHA-256
        #expect(stillSignsIn)
        #expect(PasswordHasher.bcryptInput(old) == old)
        #expect(PasswordHasher.bcryptInput(long).utf8.count == 44)
        #expect(try await hasher.verify(long, against: longHash))
        #expect(try await !hasher.verify(String(repeating: "p", count: 99) + "q", against: longHash))
        #expect(try await !hasher.verify(old, against: longHash), "its first 72 bytes are not the password")
        await hasher.shutdown()
    }

    // MARK: Emails

    @Test(arguments: Backend.available)
    func anEmailIsKeptAsSentOrRefusedNeverTrimmed(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let cases: [(email: String, message: String)] = [
                (" spaced@example.com", "email must not start or end with spaces"),
                ("spaced@example.com\u{A0}", "email must not start or end with spaces"),
                ("émile@example.com", "email may contain only printable ASCII"),
                ("a(b)@example.com", "email may contain only printable ASCII"),
                ("dots..twice@example.com", "email must be a valid address"),
                ("x@-dash.example", "email must be a valid address"),
                (String(repeating: "a", count: 243) + "@example.com", "email must be at most 254 characters long"),
            ]
            for (index, invalid) in cases.enumerated() {
                let answer = try await api.send(.post, "/users", json: registration("mail_\(index)", invalid.email, "long enough"))
                #expect(answer.status == .badRequest, "\(invalid.email)")
                #expect(try answer.error().message.hasPrefix(invalid.message), "\(invalid.email): \(answer.text)")
            }
            // A local part over 64 characters and the usual specials are fine: the contract's pattern allows them
            for (index, email) in [String(repeating: "l", count: 70) + "@example.com", "o'neil+tag@mail.example.co.uk"].enumerated() {
                let answer = try await api.send(.post, "/users", json: registration("fine_\(index)", email, "long enough"))
                #expect(answer.status == .created, "\(email): \(answer.text)")
                #expect(try answer.decode(UserJSON.self).email == email)
            }
        }
    }

    // MARK: Products

    @Test(arguments: Backend.available)
    func aProductNameIsOneToTwoHundredCodePointsAsSentAndNotOnlySpaces(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            // Given names at the bounds, counted in code points before trimming
            let twoHundred = String(repeating: Self.combiningE, count: 100)
            let twoHundredTwo = String(repeating: Self.combiningE, count: 101)  // 101 characters, the old rule took it
            let paddedToLong = " " + String(repeating: "n", count: 200)
            // When they are posted
            let fine = try await api.postProduct(barcode, name: twoHundred, token: token, as: account)
            let long = try await api.postProduct(barcode, name: twoHundredTwo, token: token, as: account)
            let padded = try await api.postProduct(barcode, name: paddedToLong, token: token, as: account)
            let spaces = try await api.postProduct(barcode, name: "\u{A0}\u{3000} ", token: token, as: account)
            let trimmed = try await api.postProduct(barcode, name: "\u{3000} Oat milk ", token: token, as: account)
            // Then
            #expect(fine.status == .created, "\(fine.text)")
            for refused in [long, padded] {
                #expect(refused.status == .badRequest)
                #expect(try refused.error().message == "name must be 1 to 200 characters long")
            }
            #expect(spaces.status == .badRequest)
            #expect(try spaces.error().message == "name must not be only spaces")
            #expect(trimmed.status == .created)
            #expect(try trimmed.decode(ProductJSON.self).name == "Oat milk", "the spaces around it are trimmed for storing")
        }
    }

    @Test(arguments: Backend.available)
    func aDescriptionIsAtMostTwoThousandCodePointsAsSent(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            // 1001 characters, 2002 code points
            let long = try await api.postProduct(barcode, name: "ok", token: token, as: account,
                                                 description: String(repeating: Self.combiningE, count: 1001))
            let fine = try await api.postProduct(barcode, name: "ok", token: token, as: account,
                                                 description: String(repeating: Self.combiningE, count: 1000))
            #expect(long.status == .badRequest)
            #expect(try long.error().message == "description must be at most 2000 characters long")
            #expect(fine.status == .created, "\(fine.text)")
        }
    }

    @Test(arguments: Backend.available)
    func theTestFlagMayBeTrueOrFalseInAnyCaseAsTheContractsPatternSays(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let barcode = Barcodes.unique()
            let token = try await api.sessionToken(barcode, as: account)
            let upper = try await api.postProduct(barcode, name: "ok", token: token, as: account, test: #""TRUE""#)
            #expect(upper.status == .created, "\(upper.text)")
            #expect(try upper.decode(ProductJSON.self).test)
            #expect(try await api.products(barcode, as: account).isEmpty, "a test product is never stored")
        }
    }

    @Test(arguments: Backend.available)
    func anIdempotencyKeyIsOneToTwoHundredFiftyFiveCodePointsPercentDecoded(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given keys as the generated clients send them, percent-encoded: 128 characters of
            // 2 code points (256, which the old rule took), 127 of them (254), and a lone '%'
            let tooLong = String(repeating: "e%CC%81", count: 128)
            let fine = String(repeating: "e%CC%81", count: 127)
            func register(_ name: String, key: String) async throws -> Answer {
                try await api.send(.post, "/users", headers: [.init("Idempotency-Key")!: key],
                                   json: registration(name, "\(name)@example.com", "long enough"))
            }
            // When they register
            let long = try await register("key_long", key: tooLong)
            let accepted = try await register("key_fine", key: fine)
            let percent = try await register("key_pct", key: "%")
            // Then
            #expect(long.status == .badRequest)
            #expect(try long.error().message == "Idempotency-Key must be 1 to 255 characters long")
            #expect(accepted.status == .created, "\(accepted.text)")
            #expect(percent.status == .badRequest)
            #expect(try percent.error().message.contains("without '%'"), "\(percent.text)")
        }
    }

    // MARK: Sync

    @Test(arguments: Backend.available)
    func aPullCursorIsOneToEighteenDigits(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            // Given the longest cursor the contract allows, one digit more, and none
            let longest = try await api.send(.get, "/v1/sync/pull?since=999999999999999999", headers: account.bearer)
            let tooLong = try await api.send(.get, "/v1/sync/pull?since=1000000000000000000", headers: account.bearer)
            let empty = try await api.send(.get, "/v1/sync/pull?since=", headers: account.bearer)
            // Then the longest reads as a cursor after which nothing has changed; the others are refused
            #expect(longest.status == .ok, "\(longest.text)")
            #expect(longest.text.contains(#""changes":[]"#), "\(longest.text)")
            for refused in [tooLong, empty] {
                #expect(refused.status == .badRequest)
                #expect(try refused.error().message.contains("1 to 18 digits"), "\(refused.text)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func aChangeIdIsOneToOneHundredTwentyEightCodePoints(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            // Given change ids at the bound, counted in code points
            let atBound = String(repeating: Self.combiningE, count: 64)  // 64 characters, 128 code points
            let overBound = atBound + "x"
            // When they are pushed
            let fine = try await api.send(.post, "/v1/sync/push", headers: account.bearer, json: push(changeID: atBound))
            let long = try await api.send(.post, "/v1/sync/push", headers: account.bearer, json: push(changeID: overBound))
            // Then
            #expect(fine.status == .ok, "\(fine.text)")
            #expect(long.status == .badRequest)
            #expect(try long.error().message == "changes[0].id must be 1 to 128 characters long")
        }
    }

    @Test(arguments: Backend.available)
    func aStateSentBackIsAtMostItsMaxLengthInCodePointsElseThePushIsRefusedWhole(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            // Given a state at the contract's bound, counted in code points, and one over it
            // (neither is a merge state: only the length is in question here)
            let atBound = String(repeating: Self.combiningE, count: MergeState.maxTextLength / 2)
            let overBound = atBound + "x"
            // When they are sent back with a change
            let fine = try await api.send(.post, "/v1/sync/push", headers: account.bearer,
                                          json: push(changeID: "c-1", extra: #","restores":true,"state":\#(jsonString(atBound))"#))
            let long = try await api.send(.post, "/v1/sync/push", headers: account.bearer,
                                          json: push(changeID: "c-2", extra: #","restores":true,"state":\#(jsonString(overBound))"#))
            // Then the one at the bound is read (and rejected for what it holds), the one over it refused whole
            #expect(fine.status == .ok, "\(fine.text)")
            #expect(fine.text.contains(#""status":"rejected""#), "\(fine.text)")
            #expect(long.status == .badRequest)
            #expect(try long.error().message == "changes[0].state must be at most \(MergeState.maxTextLength) characters long, not \(MergeState.maxTextLength + 1)")
        }
    }

    @Test(arguments: Backend.available)
    func nullDeltasAreNoDeltasAsTheContractSays(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let account = try await api.signUp()
            let answer = try await api.send(.post, "/v1/sync/push", headers: account.bearer, json: push(changeID: "c-1", deltas: "null"))
            #expect(answer.status == .ok, "\(answer.text)")
            #expect(answer.text.contains(#""status":"applied""#), "\(answer.text)")
        }
    }

    // MARK: Helpers

    private func registration(_ username: String, _ email: String, _ password: String) -> String {
        #"{"username":\#(jsonString(username)),"email":\#(jsonString(email)),"password":\#(jsonString(password))}"#
    }

    private func credentials(_ email: String, _ password: String) -> String {
        #"{"email":\#(jsonString(email)),"password":\#(jsonString(password))}"#
    }

    /// A push of one valid pantry item under `changeID`.
    private func push(changeID: String, deltas: String? = nil, extra: String = "") -> String {
        let stamp = HLCStamp(millis: UnixMillis.now() - 1000, counter: 0, node: "test").description
        let fields = #"{"name":"Oat milk","quantity":1,"boughtAt":1764000000000,"status":"inPantry"}"#
        let deltasField = deltas.map { #","deltas":\#($0)"# } ?? ""
        return #"{"changes":[{"id":\#(jsonString(changeID)),"collection":"pantry_items","recordId":"item-1","hlc":"\#(stamp)","fields":\#(fields)\#(deltasField),"deleted":false\#(extra)}]}"#
    }
}
