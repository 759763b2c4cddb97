import BarcodeImages
import EventualAPI
import EventualServer
import Foundation
import Testing
@testable import Recycling

/// Photos without a barcode go to the server's vision model (a local fake OpenAI-compatible
/// server here): taken in a basement, classified when the network returns; a model outage keeps
/// the scan waiting, never loses it.
@Suite("Photo scans through the vision model", .timeLimit(.minutes(3)), .tags(.endToEnd))
struct PhotoScanTests {
    @Test func aPhotoTakenOfflineIsClassifiedAndScoredWhenTheNetworkReturns() async throws {
        try await withFakeVisionServer(.answer("Battery")) { vision in
            try await withLiveServer(configure: { $0.vision = VisionConfiguration(baseURL: vision.baseURL, model: "test-model", timeout: .seconds(10)) }) { server, scratch in
                try await SharedData.seed(scratch)
                let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
                _ = try await phone.signUp()
                // Given a photo of a battery (no barcode) taken in a basement near Salzburg's centre
                let photo = try plainPhoto(in: scratch.folder("camera"))
                let near = "\(SharedData.salzburgCentre.latitude),\(SharedData.salzburgCentre.longitude)"
                let waiting = try #require(try json(try await phone.offline(["scan", "--image", photo.path, "--at", near, "--json"])) as? [String: Any])
                #expect(waiting["state"] as? String == "waiting" && waiting["offlineGuess"] as? Bool == false)
                #expect(vision.requests.isEmpty)
                // When the network returns (and a command that reaches the server runs: `scans` reads only the device)
                #expect(try await phone.run(["status"]).stdout.contains("1 scan was classified while you were away"))
                let scans = try #require(try json(try await phone.run(["scans", "--json"])) as? [[String: Any]])
                // Then the model classified it, the bin is the nearest point that takes batteries, and it scored
                let scan = try #require(scans.first)
                #expect(scan["state"] as? String == "classified" && scan["trashType"] as? String == "Battery")
                #expect(scan["bin"] as? String == "special" && scan["points"] as? Int == 50)
                #expect(scan["specialPoint"] as? String != nil)
                #expect(vision.requests.count == 1)
                // And the special point is named by an id `point` looks up, and how far it is (issue 46, item 12)
                let pointID = try #require(scan["specialPointId"] as? String, "\(scan)")
                let meters = try #require(scan["specialPointDistanceMeters"] as? Double, "\(scan)")
                let point = try #require(try json(try await phone.run(["point", pointID, "--json"])) as? [String: Any])
                #expect(point["id"] as? String == pointID && (point["materials"] as? [String])?.contains("batteries") == true, "\(point)")
                #expect((0..<5_000).contains(meters), "\(meters) m from Salzburg's centre")

                // And the copy of the photo is gone from the app's folder once classified (its attachments too)
                let photos = try FileManager.default.subpathsOfDirectory(atPath: scratch.folder("phone").path)
                    .filter { $0.hasSuffix(".jpg") || ($0.contains("attachments/") && !$0.hasSuffix("attachments")) }
                #expect(photos.isEmpty, "\(photos)")
            }
        }
    }

    @Test func aTenMiBPhotoTakenOfflineIsUploadedAsAnAttachmentAndClassifiedOnceWithItsPointsOnce() async throws {
        try await withFakeVisionServer(.answer("Glass Bottle")) { vision in
            try await withLiveServer(configure: { $0.vision = VisionConfiguration(baseURL: vision.baseURL, model: "test-model", timeout: .seconds(30)) }) { server, scratch in
                let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
                _ = try await phone.signUp()
                // Given a 10 MiB photo (more than the 4 MiB a scan took inside its call) taken in a basement
                var photo = Data([0xFF, 0xD8, 0xFF, 0xE0])
                photo.append(Data((0..<(10 * 1024 * 1024 - 4)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }))
                let file = scratch.folder("camera").appendingPathComponent("bottle.jpg")
                try FileManager.default.createDirectory(at: scratch.folder("camera"), withIntermediateDirectories: true)
                try photo.write(to: file)
                let waiting = try #require(try json(try await phone.offline(["scan", "--image", file.path, "--json"])) as? [String: Any])
                #expect(waiting["state"] as? String == "waiting")
                // When the network returns, and the student syncs twice
                #expect(try await phone.run(["sync"]).status == 0)
                #expect(try await phone.run(["sync"]).status == 0)
                // Then the model saw the photo once, and the scan scored once
                let scans = try #require(try json(try await phone.run(["scans", "--json"])) as? [[String: Any]])
                #expect(scans.count == 1 && scans[0]["state"] as? String == "classified" && scans[0]["trashType"] as? String == "Glass Bottle")
                #expect(scans[0]["points"] as? Int == 50, "\(scans)")
                #expect(vision.requests.count == 1)
                // And the photo is gone from the phone once classified
                let kept = try FileManager.default.subpathsOfDirectory(atPath: scratch.folder("phone").path)
                    .filter { $0.contains("/attachments/") && !$0.hasSuffix("/attachments") }
                #expect(kept.isEmpty, "\(kept)")
            }
        }
    }

    @Test func aModelOutageKeepsTheScanWaitingUntilARetrySucceeds() async throws {
        try await withFakeVisionServer(.raw(status: 500, body: "{\"error\":\"overloaded\"}")) { vision in
            try await withLiveServer(configure: { $0.vision = VisionConfiguration(baseURL: vision.baseURL, model: "test-model", timeout: .seconds(10)) }) { server, scratch in
                let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
                _ = try await phone.signUp()
                // When the model fails while the student scans online
                let photo = try plainPhoto(in: scratch.folder("camera"))
                let first = try await phone.run(["scan", "--image", photo.path, "--json"])
                let waiting = try #require(try json(first) as? [String: Any], "\(first.stderr)")
                // Then the scan waits (nothing is lost, nothing is scored)
                #expect(first.status == 0 && waiting["state"] as? String == "waiting" && waiting["points"] is NSNull)
                // When the model is back, a sync classifies it
                vision.set(.answer("Glass Bottle"))
                let sync = try await phone.run(["sync"])
                #expect(sync.status == 0, "\(sync.stderr)")
                let scans = try #require(try json(try await phone.run(["scans", "--json"])) as? [[String: Any]])
                #expect(scans.count == 1 && scans[0]["trashType"] as? String == "Glass Bottle" && scans[0]["bin"] as? String == "blue")
            }
        }
    }

    @Test func aSilentModelDoesNotHoldTheScanCommand() async throws {
        try await withFakeVisionServer(.hang) { vision in
            try await withLiveServer(configure: { $0.vision = VisionConfiguration(baseURL: vision.baseURL, model: "test-model", timeout: .seconds(30)) }) { server, scratch in
                let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
                _ = try await phone.signUp()
                // When a photo reaches a server whose model takes the whole 30 s it is given
                let photo = try plainPhoto(in: scratch.folder("camera"))
                let clock = ContinuousClock()
                let start = clock.now
                // NB: 10 s for the server to answer at all (a machine busy with the whole suite took
                // more than the command's own 300 ms, and the scan said "offline"), which leaves the
                // scan's wait for the classification at its own 10 s.
                let scan = try await phone.run(["scan", "--image", photo.path], answerTimeout: 10)
                let took = clock.now - start
                // Then the command answers after its own 10 s wait, saying the scan is saved and waits.
                // NB: it waited 25 s before (its first-byte timeout); the bound gives a busy machine 8 s more.
                #expect(scan.status == 0 && scan.stdout.contains("the server is still classifying it"), "\(scan.stdout)\(scan.stderr)")
                #expect(took < .seconds(18), "scan took \(took)")
                let scans = try #require(try json(try await phone.offline(["scans", "--json"])) as? [[String: Any]])
                #expect(scans.count == 1 && scans[0]["state"] as? String == "waiting")
            }
        }
    }

    @Test func aServerWithoutAModelFailsAPhotoScanWithTheReason() async throws {
        try await withLiveServer { server, scratch in
            let phone = Phone(dataDirectory: scratch.folder("phone"), server: server)
            _ = try await phone.signUp()
            let photo = try plainPhoto(in: scratch.folder("camera"))
            // When a photo without a barcode reaches a server with no vision model
            let scan = try await phone.run(["scan", "--image", photo.path])
            // Then the command fails in one line with the server's reason, and the scan says so
            #expect(scan.status == 1 && scan.stderr.contains("cannot classify photos"), "\(scan.stdout)\(scan.stderr)")
            let scans = try #require(try json(try await phone.run(["scans", "--json"])) as? [[String: Any]])
            #expect(scans.count == 1 && scans[0]["state"] as? String == "failed")
            #expect((scans[0]["message"] as? String)?.contains("cannot classify photos") == true)
            // And bad photos are refused on the device before anything is queued
            let text = scratch.folder("camera").appendingPathComponent("notes.jpg")
            try Data("not a photo".utf8).write(to: text)
            let refused = try await phone.run(["scan", "--image", text.path])
            #expect(refused.isOneLineError && refused.stderr.contains("is not a JPEG, PNG or HEIC photo"))
            let missing = try await phone.run(["scan", "--image", "/nonexistent/photo.jpg"])
            #expect(missing.isOneLineError && missing.stderr.contains("there is no such file"))
        }
    }
}

/// A JPEG of a plain grey card: a photo with no barcode in it.
func plainPhoto(in folder: URL) throws -> URL {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let photo = folder.appendingPathComponent("item-\(UUID().uuidString.prefix(6)).jpg")
    try GreyImage(width: 64, height: 64, pixels: [UInt8](repeating: 128, count: 64 * 64)).jpeg(quality: 85).write(to: photo)
    return photo
}
