import EventualAPI
import Foundation
import Testing

@Suite("Dates on the wire")
struct DateTranscoderTests {
    @Test func formatsLikeFoundationAndReadsItsOwnOutputBack() throws {
        let transcoder = MillisecondDateTranscoder()
        let foundation = ISO8601DateFormatter()
        foundation.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        foundation.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        let samples: [Int64] = [0, 951_782_400_000, 1_709_210_096_789, 4_102_444_799_999, -86_400_001]
            + (0..<500).map { _ in Int64.random(in: 0...4_102_444_800_000, using: &generator) }
        for millis in samples {
            let date = Date(timeIntervalSince1970: Double(millis) / 1000)
            let text = try transcoder.encode(date)
            #expect(text == foundation.string(from: date), "\(millis)")
            #expect(Int64((try transcoder.decode(text).timeIntervalSince1970 * 1000).rounded()) == millis, "\(text)")
        }
    }

    @Test func readsOtherRFC3339FormsAndRefusesNonsense() throws {
        let transcoder = MillisecondDateTranscoder()
        #expect(try transcoder.decode("2026-11-23T13:00:00+01:00").timeIntervalSince1970 == 1_795_435_200)
        #expect(try transcoder.decode("2026-11-23T12:00:00Z").timeIntervalSince1970 == 1_795_435_200)
        #expect(throws: (any Error).self) { try transcoder.decode("2026-13-45T99:00:00.000Z") }
        #expect(throws: (any Error).self) { try transcoder.decode("yesterday") }
    }
}
