// Measures analytics on a release build against a real server on loopback (SQLite): EVENTS usage
// events from 200 users over 30 days posted through POST /v1/events in batches of 500 on 8
// connections (the bodies are made before the clock starts), then every question over the 30
// days, three times each (the median counts). Prints one line per question, then:
//   ingest E events/s | slowest question Q ms
//   eventual-bench-analytics [EVENTS]
import AsyncHTTPClient
import EventualAPI
import EventualServer
import Foundation
import NIOCore
import NIOHTTP1

let total = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1_000_000 : 1_000_000
let users = 200, batchSize = 500, connections = 8
let work = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-bench-analytics-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: work) }

func freePort() -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

struct Failure: Error, CustomStringConvertible { let description: String }

let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(timeout: .init(connect: .seconds(10), read: .seconds(120))))

func request(_ method: HTTPMethod, _ url: String, token: String? = nil, body: ByteBuffer? = nil) async throws -> (Int, ByteBuffer) {
    var request = HTTPClientRequest(url: url)
    request.method = method
    request.headers.add(name: "Content-Type", value: "application/json")
    if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
    if let body { request.body = .bytes(body) }
    let response = try await http.execute(request, timeout: .seconds(300))
    return (Int(response.status.code), try await response.body.collect(upTo: 64 * 1024 * 1024))
}

/// Registers and signs in `name`; returns the access token.
func account(_ name: String, base: String) async throws -> String {
    let body = #"{"username":"\#(name)","email":"\#(name)@bench.example","password":"bench-password"}"#
    let (registered, _) = try await request(.POST, "\(base)/users", body: ByteBuffer(string: body))
    guard registered == 201 else { throw Failure(description: "register \(name): HTTP \(registered)") }
    let (status, answer) = try await request(.POST, "\(base)/auth/login", body: ByteBuffer(string: #"{"email":"\#(name)@bench.example","password":"bench-password"}"#))
    guard status == 201, let token = (try JSONSerialization.jsonObject(with: Data(buffer: answer)) as? [String: Any])?["accessToken"] as? String else {
        throw Failure(description: "login \(name): HTTP \(status)")
    }
    return token
}

/// One batch's body: a realistic mix of every app's events, spread over the last 30 days.
func batchBody(_ batch: Int, of batches: Int, now: Int64, random: inout SystemRandomNumberGenerator) -> ByteBuffer {
    var text = #"{"events":["#
    text.reserveCapacity(batchSize * 230)
    let trash = ["plastic", "glass", "paper", "metal", "organic"], platforms = ["ios", "android"]
    for index in 0..<batchSize {
        // NB: devices send what happened lately: batch after batch, the month goes by in order.
        let slice = 30 * 86_400_000 / Int64(max(1, batches))
        let at = now - 30 * 86_400_000 + Int64(batch) * slice + Int64.random(in: 0..<max(1, slice), using: &random)
        let (app, name, properties): (String, String, String)
        switch Int.random(in: 0..<20, using: &random) {
        case 0: (app, name, properties) = ("sustainu", "login", "{}")
        case 1: (app, name, properties) = ("sustainu", "app_opened", "{}")
        case 2: (app, name, properties) = ("sustainu", "notification_shown", #"{"kind":"daily_reminder"}"#)
        case 3, 4: (app, name, properties) = ("sustainu", "map_opened", #"{"source":"\#(Bool.random(using: &random) ? "navbar" : "main")"}"#)
        case 5: (app, name, properties) = ("sustainu", "point_visited", #"{"point_id":"P-\#(Int.random(in: 1...60, using: &random))"}"#)
        case 6: (app, name, properties) = ("sustainu", "scan_started", "{}")
        case 7, 8:
            (app, name, properties) = ("sustainu", "scan_answered",
                #"{"duration_ms":\#(Int.random(in: 300...6000, using: &random)),"trash_type":"\#(trash.randomElement(using: &random)!)"}"#)
        case 9: (app, name, properties) = ("sustainu", "tip_opened", #"{"trash_type":"\#(trash.randomElement(using: &random)!)"}"#)
        case 10:
            (app, name, properties) = ("sustainu", "tip_closed",
                #"{"seconds":\#(Double(Int.random(in: 20...1200, using: &random)) / 10),"trash_type":"\#(trash.randomElement(using: &random)!)"}"#)
        case 11, 12:
            (app, name, properties) = ("spendiq", "transaction_recorded",
                #"{"amount_minor":\#(Int.random(in: 1000...500_000, using: &random)),"currency":"COP","kind":"\#(Int.random(in: 0..<4, using: &random) == 0 ? "income" : "expense")"}"#)
        case 13: (app, name, properties) = ("spendiq", "offer_viewed", #"{"offer_id":"o\#(Int.random(in: 1...300, using: &random))","shop":"Shop \#(Int.random(in: 1...40, using: &random))"}"#)
        case 14: (app, name, properties) = ("spendiq", "dashboard_opened", "{}")
        case 15: (app, name, properties) = ("pantry", "product_scanned", #"{"result":"\#(["known", "unknown", "offline"].randomElement(using: &random)!)"}"#)
        case 16: (app, name, properties) = ("pantry", "product_posted", "{}")
        case 17: (app, name, properties) = ("pantry", "product_voted", #"{"rating":\#(Int.random(in: -5...5, using: &random))}"#)
        default: (app, name, properties) = ("sustainu", "app_opened", "{}")
        }
        if index > 0 { text += "," }
        // NB: ids sort by time, as the devices' UUIDv7s do.
        text += #"{"id":"\#(String(format: "b%07d-%03d", batch, index))","name":"\#(name)","app":"\#(app)","appVersion":"1.0.0","platform":"\#(platforms[(batch % users) & 1])","#
            + #""sessionId":"s\#(batch)","at":\#(at),"properties":\#(properties)}"#
    }
    text += "]}"
    return ByteBuffer(string: text)
}

func run() async throws {
    let port = freePort()
    var configuration = ServerConfiguration(hostname: "127.0.0.1", port: port,
                                            database: .sqlite(path: work.appendingPathComponent("bench.sqlite").path),
                                            logLevel: .critical, bcryptCost: 4)
    configuration.throttle.registrationsPerAddress.limit = 100_000
    let app = try await buildApplication(configuration)
    let server = Task { try await app.runService() }
    let base = "http://127.0.0.1:\(port)"
    for _ in 0..<100 {
        if (try? await request(.GET, "\(base)/health"))?.0 == 200 { break }
        try await Task.sleep(for: .milliseconds(100))
    }
    var tokens: [String] = []
    for index in 0..<users { tokens.append(try await account("bench\(index)", base: base)) }
    let admin = tokens[0]
    FileHandle.standardError.write(Data("granting admin: via the database\n".utf8))
    let database = try await Database.open(configuration.database, logger: .init(label: "bench"))
    _ = try await RoleAdministration(database: database).set(.admin, email: "bench0@bench.example")
    await database.close()

    let batches = (total + batchSize - 1) / batchSize
    let now = UnixMillis.now()
    var random = SystemRandomNumberGenerator()
    let bodies = (0..<batches).map { batchBody($0, of: batches, now: now, random: &random) }
    FileHandle.standardError.write(Data("made \(batches) batches of \(batchSize); sending on \(connections) connections\n".utf8))

    let signedIn = tokens
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Int.self) { group in
        for lane in 0..<connections {
            group.addTask {
                var filed = 0
                for batch in stride(from: lane, to: batches, by: connections) {
                    let (status, answer) = try await request(.POST, "\(base)/v1/events", token: signedIn[batch % users], body: bodies[batch])
                    guard status == 200 else { throw Failure(description: "batch \(batch): HTTP \(status) \(String(buffer: answer).prefix(200))") }
                    filed += ((try JSONSerialization.jsonObject(with: Data(buffer: answer)) as? [String: Any])?["accepted"] as? Int) ?? 0
                }
                return filed
            }
        }
        var filed = 0
        for try await count in group { filed += count }
        guard filed == batches * batchSize else { throw Failure(description: "filed \(filed) of \(batches * batchSize)") }
    }
    let ingestSeconds = (ContinuousClock.now - start).fractionalMilliseconds / 1000
    let rate = Double(batches * batchSize) / ingestSeconds

    let today = AnalyticsRangeText.today(now)
    var slowest = (name: "", ms: 0.0)
    for question in Operations.AnalyticsQuestion.Input.Path.QuestionPayload.allCases {
        var times: [Double] = []
        for _ in 0..<3 {
            let asked = ContinuousClock.now
            let (status, answer) = try await request(.GET, "\(base)/v1/analytics/\(question.rawValue)?from=\(today.from)&to=\(today.to)", token: admin)
            guard status == 200 else { throw Failure(description: "\(question.rawValue): HTTP \(status) \(String(buffer: answer).prefix(200))") }
            times.append((ContinuousClock.now - asked).fractionalMilliseconds)
        }
        let median = times.sorted()[1]
        print(String(format: "question %@: %.1f ms", question.rawValue, median))
        if median > slowest.ms { slowest = (question.rawValue, median) }
    }
    FileHandle.standardError.write(Data("slowest: \(slowest.name)\n".utf8))
    print(String(format: "ingest %.0f events/s | slowest question %.0f ms", rate, slowest.ms))
    server.cancel()
    try await http.shutdown()
}

/// The last 30 days as the questions' `from` and `to`.
enum AnalyticsRangeText {
    static func today(_ now: Int64) -> (from: String, to: String) {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        let date = UnixMillis.date(milliseconds: now)
        return (formatter.string(from: date.addingTimeInterval(-29 * 86_400)), formatter.string(from: date))
    }
}

do {
    try await run()
} catch {
    FileHandle.standardError.write(Data("bench failed: \(error)\n".utf8))
    exit(1)
}
