// Measures live changes (scripts/bench-live.sh) with the server in processes of its own, so that
// its memory per live device is its own:
//   eventual-bench-live serve [DATABASE]   a server on a free loopback port (SQLite in a scratch
//       folder, or the postgres:// URL given); prints "ready PORT PID" and serves until its
//       standard input closes.
//   eventual-bench-live devices DEVICES ENGINES RATE SECONDS PORTS PIDS   (PORTS, PIDS: one or more,
//       comma-separated: the servers, on one database)
//       DEVICES people in households of five, each with one device holding a live channel (a
//       household's members spread over the servers); ENGINES of the households also have a real
//       SyncEngine, live, on a second device of one member, with a live query of the items; a
//       writer pushes one item a change into a household RATE times a second for SECONDS, through
//       the writing member's server. Prints how long a signal took to reach the other members'
//       channels (and, with two servers, those on the other one), how long the item took to show
//       in an engine's live query, and what each channel costs the server in memory.
import AsyncHTTPClient
import EventualAPI
import EventualBench
import EventualKit
import EventualServer
import EventualStorage
import Foundation
import GRDB
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import WSClient

let usage = "usage: eventual-bench-live serve [DATABASE] | devices DEVICES ENGINES RATE SECONDS PORTS PIDS"
let arguments = CommandLine.arguments
let work = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-bench-live-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: work) }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bench-live: \(message)\n".utf8))
    exit(1)
}

func milliseconds(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Double {
    (end - start).fractionalMilliseconds
}

/// The resident memory of process `pid`, in KiB (`VmRSS` in /proc).
func residentKiB(of pid: Int) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return 0 }
    return kib
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[max(0, min(sorted.count - 1, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))]
}

// MARK: The server

func serve() async throws -> Never {
    let database = arguments.count > 2
        ? DatabaseLocation(argument: arguments[2])
        : .sqlite(path: work.appendingPathComponent("server.sqlite").path)
    var configuration = ServerConfiguration(database: database, logLevel: .error, bcryptCost: 4)
    // NB: every bench person registers from 127.0.0.1; the default limit is for a class behind one NAT.
    configuration.throttle.registrationsPerAddress = ThrottleRule(limit: 1_000_000, window: .seconds(3600))
    // NB: BENCH_POOL sets the servers' PostgreSQL pool (--database-pool), to compare sizes.
    configuration.databasePoolSize = ProcessInfo.processInfo.environment["BENCH_POOL"].flatMap { Int($0) }
    let (url, server) = try await BenchServer.start(configuration)
    // NB: straight to the file descriptor: the script reads the line while this process goes on.
    FileHandle.standardOutput.write(Data("ready \(url.port!) \(getpid())\n".utf8))
    while readLine() != nil {}
    _ = server
    exit(0)
}

// MARK: The devices

/// One person of a household, with the token of their device's live channel.
struct Person: Sendable {
    let index: Int
    let name: String
    let email: String
    let token: String
    /// Which server the person's device talks to.
    let server: Int
}

struct Household: Sendable {
    let space: String
    let members: [Person]
}

/// Everything heard, stamped on one clock: when each push started, when each channel heard of
/// it, when each engine's live query showed it.
final class Recorder: Sendable {
    struct Push {
        let space: String
        let writer: Int
        let server: Int
        let start: ContinuousClock.Instant
    }

    private struct State {
        var live = 0
        var ended = 0
        var pushes: [Push] = []
        var lastPush: [String: Int] = [:]
        var pushesBySpace: [String: [Int]] = [:]
        /// The newest push each person's channel heard of (by person).
        var heard: [Int: Int] = [:]
        var signals: [Double] = []
        var crossed: [Double] = []
        var visible: [Double] = []
        /// How long each push took to be answered: a signal cannot come before its push commits.
        var answered: [Double] = []
        var failedPushes = 0
    }

    private let state = Mutex(State())
    /// The server of each person, by person.
    let servers: [Int]

    init(servers: [Int]) { self.servers = servers }

    var live: Int { state.withLock { $0.live } }
    var ended: Int { state.withLock { $0.ended } }

    func channelIsLive() { state.withLock { $0.live += 1 } }
    func channelEnded() { state.withLock { $0.ended += 1 } }
    func pushFailed() { state.withLock { $0.failedPushes += 1 } }

    func pushAnswered(_ number: Int) {
        let now = ContinuousClock.now
        state.withLock { $0.answered.append(milliseconds(from: $0.pushes[number].start, to: now)) }
    }

    var pushAnsweredP95: Double { state.withLock { percentile($0.answered, 0.95) } }

    /// Notes push `number` as started now; answers its index.
    func pushStarts(space: String, writer: Person) -> Int {
        state.withLock { state in
            state.pushes.append(Push(space: space, writer: writer.index, server: writer.server, start: .now))
            state.lastPush[space] = state.pushes.count - 1
            state.pushesBySpace[space, default: []].append(state.pushes.count - 1)
            return state.pushes.count - 1
        }
    }

    /// Person `person`'s channel heard that `spaces` moved.
    func heard(_ spaces: [String: Int64], by person: Int) {
        let now = ContinuousClock.now
        state.withLock { state in
            for space in spaces.keys {
                guard let number = state.lastPush[space], number > (state.heard[person] ?? -1) else { continue }
                let push = state.pushes[number]
                let elapsed = milliseconds(from: push.start, to: now)
                state.signals.append(elapsed)
                if push.server != servers[person] { state.crossed.append(elapsed) }
                state.heard[person] = number
            }
        }
    }

    /// An engine's live query showed the item of push `number`.
    func shown(push number: Int) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard number < state.pushes.count else { return }
            state.visible.append(milliseconds(from: state.pushes[number].start, to: now))
        }
    }

    /// The members who never heard of the last push into their household by someone else.
    func unsignalled(_ households: [Household]) -> [String] {
        state.withLock { state in
            var missing: [String] = []
            for household in households {
                for member in household.members {
                    let last = state.pushesBySpace[household.space]?.last { state.pushes[$0].writer != member.index }
                    if let last, (state.heard[member.index] ?? -1) < last { missing.append(member.name) }
                }
            }
            return missing
        }
    }

    var figures: (signals: [Double], crossed: [Double], visible: [Double], pushes: Int, failed: Int) {
        state.withLock { ($0.signals, $0.crossed, $0.visible, $0.pushes.count, $0.failedPushes) }
    }
}

/// JSON requests to the servers' API, as a device's setup makes them.
struct API: Sendable {
    let http: HTTPClient
    let bases: [String]

    struct Answer {
        let status: UInt
        let body: Data
    }

    func call(_ method: HTTPMethod, _ path: String, on server: Int, token: String? = nil, json: String? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: bases[server] + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: response.status.code, body: Data(body.readableBytesView))
    }

    /// `method path` must answer `status`; the bench stops otherwise (its setup is not measured).
    func expect(_ status: UInt, _ method: HTTPMethod, _ path: String, on server: Int, token: String? = nil, json: String? = nil) async throws -> Data {
        let answer = try await call(method, path, on: server, token: token, json: json)
        guard answer.status == status else {
            fail("\(method) \(path) answered \(answer.status), not \(status): \(String(decoding: answer.body, as: UTF8.self))")
        }
        return answer.body
    }

    func register(_ name: String, on server: Int) async throws -> (email: String, token: String) {
        let email = "\(name)@bench.example"
        _ = try await expect(201, .POST, "/users", on: server, json: #"{"username":"\#(name)","email":"\#(email)","password":"bench-password"}"#)
        return (email, try await login(email, on: server))
    }

    func login(_ email: String, on server: Int) async throws -> String {
        struct Token: Decodable { let accessToken: String }
        let body = try await expect(201, .POST, "/auth/login", on: server, json: #"{"email":"\#(email)","password":"bench-password"}"#)
        return try JSONDecoder().decode(Token.self, from: body).accessToken
    }

    /// Household `number`: five people, the first its owner, the others invited and accepting.
    func household(_ number: Int, run: String) async throws -> Household {
        var members: [Person] = []
        for place in 0..<5 {
            let index = number * 5 + place, server = (number + place) % bases.count
            let name = "live\(run)_\(index)"
            let (email, token) = try await register(name, on: server)
            members.append(Person(index: index, name: name, email: email, token: token, server: server))
        }
        let owner = members[0], space = UUID().uuidString.lowercased()
        _ = try await expect(201, .POST, "/v1/spaces", on: owner.server, token: owner.token, json: #"{"id":"\#(space)","name":"Home \#(number)"}"#)
        struct Invitations: Decodable {
            struct Invitation: Decodable { let id: String }
            let invitations: [Invitation]
        }
        for member in members.dropFirst() {
            _ = try await expect(202, .POST, "/v1/spaces/\(space)/invitations", on: owner.server, token: owner.token,
                                 json: #"{"invitee":"\#(member.name)","role":"editor"}"#)
            let list = try JSONDecoder().decode(Invitations.self, from: try await expect(200, .GET, "/v1/invitations", on: member.server, token: member.token))
            guard let invitation = list.invitations.first else { fail("\(member.name) has no invitation to Home \(number)") }
            _ = try await expect(200, .POST, "/v1/invitations/\(invitation.id)/accept", on: member.server, token: member.token)
        }
        return Household(space: space, members: members)
    }

    /// One change of an item of `space`, pushed with `writer`'s token: a new item named for push `number`.
    func push(_ number: Int, into space: String, by writer: Person) async throws -> Bool {
        let now = UnixMillis.now()
        let stamp = HLCStamp(millis: now, counter: 0, node: "bench\(writer.index)")
        let json = #"{"changes":[{"id":"\#(UUID().uuidString)","collection":"pantry_items","recordId":"live-\#(number)","space":"\#(space)","#
            + #""hlc":"\#(stamp)","fields":{"name":"Live \#(number)","quantity":1,"unit":"pcs","status":"inPantry","boughtAt":\#(now)},"deleted":false}]}"#
        let answer = try await call(.POST, "/v1/sync/push", on: writer.server, token: writer.token, json: json)
        return answer.status == 200 && String(decoding: answer.body, as: UTF8.self).contains(#""status":"applied""#)
    }
}

/// Opens person's live channel to their server; it stays open until the process ends.
func openChannel(of person: Person, ports: [Int], recorder: Recorder) {
    var logger = Logger(label: "bench-live-channel")
    logger.logLevel = .critical
    var headers = HTTPFields()
    headers[.authorization] = "Bearer \(person.token)"
    let url = "ws://127.0.0.1:\(ports[person.server])\(LiveWire.path)?collection=pantry_items"
    Task {
        _ = try? await WebSocketClient.connect(url: url, configuration: .init(additionalHeaders: headers), logger: logger) { inbound, _, _ in
            let decoder = JSONDecoder()
            for try await message in inbound.messages(maxSize: 1 << 16) {
                guard case .text(let text) = message, let decoded = try? decoder.decode(LiveWire.Message.self, from: Data(text.utf8)) else { continue }
                switch decoded.type {
                case .live: recorder.channelIsLive()
                case .moved: recorder.heard(decoded.spaces ?? [:], by: person.index)
                default: break
                }
            }
        }
        recorder.channelEnded()
    }
}

/// A second device of `person` running a real engine, live, with a live query of its items that
/// reports each bench item it shows the first time.
func startEngine(for person: Person, ports: [Int], recorder: Recorder) async throws -> SyncEngine {
    let folder = work.appendingPathComponent("engine-\(person.index)")
    let mirror = TableMirror(SyncCollections.pantryItems, table: "items")
    let store = try LocalStore(path: folder.appendingPathComponent("store.sqlite").path, migrations: [BenchTables.pantryItems])
    let vault = SessionVault(secrets: FileSecretStore(directory: folder.appendingPathComponent("secrets")))
    let link = ServerLink(serverURL: URL(string: "http://127.0.0.1:\(ports[person.server])")!, timeout: .seconds(30)) { vault.accessToken }
    _ = try await vault.signIn(email: person.email, password: "bench-password", client: link.client)
    var configuration = SyncConfiguration()
    configuration.sendsAnalytics = false
    // NB: a timer an hour away: what reaches the live query came by the live channel.
    configuration.interval = .seconds(3600)
    let engine = SyncEngine(store: store, link: link, collections: [mirror], configuration: configuration)
    let shown = store.observe(mirror, id: { (id: String) in id }) { db in
        try String.fetchAll(db, sql: "SELECT id FROM items WHERE id LIKE 'live-%'")
    }
    Task {
        var seen = Set<String>()
        do {
            for try await snapshot in shown {
                for row in snapshot.rows where seen.insert(row.row).inserted {
                    if let number = Int(row.row.dropFirst("live-".count)) { recorder.shown(push: number) }
                }
            }
        } catch {}
    }
    await engine.start()
    return engine
}

/// Waits until `condition` holds (true) or `limit` passes (false).
func waitUntil(within limit: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return true
}

func devices() async throws -> Never {
    guard arguments.count == 8, let requested = Int(arguments[2]), requested >= 5, let engineCount = Int(arguments[3]), engineCount >= 0,
          let requestedRate = Int(arguments[4]), requestedRate > 0, let seconds = Int(arguments[5]), seconds > 0 else { fail(usage) }
    let ports = arguments[6].split(separator: ",").compactMap { Int($0) }
    let pids = arguments[7].split(separator: ",").compactMap { Int($0) }
    guard !ports.isEmpty, ports.count == pids.count else { fail(usage) }
    let householdCount = requested / 5, deviceCount = householdCount * 5
    let engines = min(engineCount, householdCount)
    // NB: the households with an engine get one push in five, the others the rest; a household is
    // written at most about once a second, so that each signal answers one push.
    let others = householdCount > engines ? householdCount - engines : householdCount
    let rate = min(requestedRate, engines > 0 ? max(1, 5 * engines) : requestedRate, max(1, others * 5 / 4))
    if rate != requestedRate { FileHandle.standardError.write(Data("bench-live: \(rate) pushes a second (one a second per household at most)\n".utf8)) }

    var httpConfiguration = HTTPClient.Configuration()
    httpConfiguration.connectionPool = .init(idleTimeout: .seconds(20), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
    let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: httpConfiguration)
    let api = API(http: http, bases: ports.map { "http://127.0.0.1:\($0)" })
    let run = String(UUID().uuidString.prefix(6)).lowercased()

    // Set up: the households, through the API (not measured).
    let start = ContinuousClock.now
    var households: [Household] = []
    try await withThrowingTaskGroup(of: Household.self) { group in
        var next = 0
        for _ in 0..<min(32, householdCount) {
            let number = next
            group.addTask { try await api.household(number, run: run) }
            next += 1
        }
        while let household = try await group.next() {
            households.append(household)
            if next < householdCount {
                let number = next
                group.addTask { try await api.household(number, run: run) }
                next += 1
            }
        }
    }
    households.sort { $0.members[0].index < $1.members[0].index }
    FileHandle.standardError.write(Data(String(format: "bench-live: %d people in %d households set up in %.1f s\n",
                                               deviceCount, householdCount, milliseconds(from: start, to: .now) / 1000).utf8))

    // Every device opens its live channel; the servers' memory before and after.
    let everyone = households.flatMap(\.members).sorted { $0.index < $1.index }
    let recorder = Recorder(servers: everyone.map(\.server))
    let before = pids.map(residentKiB(of:))
    let opening = ContinuousClock.now
    for batch in stride(from: 0, to: everyone.count, by: 500) {
        for person in everyone[batch..<min(batch + 500, everyone.count)] { openChannel(of: person, ports: ports, recorder: recorder) }
        let opened = await waitUntil(within: .seconds(120)) { recorder.live >= min(batch + 500, everyone.count) || recorder.ended > 0 }
        guard opened, recorder.ended == 0 else {
            fail("\(recorder.live) live channels open of \(min(batch + 500, everyone.count)), \(recorder.ended) closed while opening")
        }
    }
    let openSeconds = milliseconds(from: opening, to: .now) / 1000
    try await Task.sleep(for: .seconds(2))
    let after = pids.map(residentKiB(of:))
    let perDeviceKiB = Double(zip(after, before).map { $0 - $1 }.reduce(0, +)) / Double(deviceCount)
    FileHandle.standardError.write(Data((String(format: "bench-live: %d live channels open in %.1f s; ", deviceCount, openSeconds)
                                         + "servers' memory \(before) -> \(after) KiB\n").utf8))

    // The engines: a second device of one member of each of the first households.
    var running: [SyncEngine] = []
    for household in households.prefix(engines) {
        running.append(try await startEngine(for: household.members[1], ports: ports, recorder: recorder))
    }
    guard await waitUntil(within: .seconds(60), { running.allSatisfy { $0.currentStatus.isLive } }) else {
        fail("\(running.filter { $0.currentStatus.isLive }.count) of \(engines) engines went live within a minute")
    }

    // The writer: RATE pushes a second, each into a household's space by one of its members; one
    // in five into a household with an engine, the others around all the households.
    let total = rate * seconds
    let interval = Duration.seconds(1) / rate
    let roundRobin = householdCount > engines ? Array(households[engines...]) : households
    let engineSpaces = Set(households.prefix(engines).map(\.space))
    var expectedShown = 0
    try await withThrowingTaskGroup(of: Void.self) { group in
        var due = ContinuousClock.now
        var engineTurn = 0, householdTurn = 0
        for step in 0..<total {
            let household: Household
            if engines > 0 && step % 5 == 0 {
                household = households[engineTurn % engines]
                engineTurn += 1
            } else {
                household = roundRobin[householdTurn % roundRobin.count]
                householdTurn += 1
            }
            if engineSpaces.contains(household.space) { expectedShown += 1 }
            // NB: the writer is never the engine's person, whose own push its engine would pull for itself.
            let writer = household.members[[0, 2, 3, 4][step % 4]]
            let number = recorder.pushStarts(space: household.space, writer: writer)
            group.addTask {
                if try await api.push(number, into: household.space, by: writer) { recorder.pushAnswered(number) } else { recorder.pushFailed() }
            }
            due += interval
            try await Task.sleep(until: due, clock: .continuous)
        }
        try await group.waitForAll()
    }
    // Then every member heard of the last push into their household, and every engine shows it.
    _ = await waitUntil(within: .seconds(10)) { recorder.unsignalled(households).isEmpty }
    _ = await waitUntil(within: .seconds(10)) { recorder.figures.visible.count >= expectedShown }
    let missing = recorder.unsignalled(households)
    let final = recorder.figures
    for engine in running { await engine.stop() }
    let liveAtEnd = recorder.live - recorder.ended
    print(String(format: "pushes %d (%d refused or failed, answered p95 %.1f ms) | signals heard %d, %d across servers | items shown by %d engines %d of %d | channels still open %d of %d",
                 final.pushes, final.failed, recorder.pushAnsweredP95, final.signals.count, final.crossed.count, engines, final.visible.count,
                 expectedShown, liveAtEnd, deviceCount))
    guard final.failed == 0, missing.isEmpty, final.visible.count >= expectedShown, recorder.ended == 0 else {
        fail("\(final.failed) pushes failed, \(missing.count) members never heard of their household's last push (\(missing.prefix(5))), "
             + "\(final.visible.count) of \(expectedShown) items shown, \(recorder.ended) channels closed")
    }
    let replicas = ports.count > 1 ? String(format: "replicas p95 %.1f ms", percentile(final.crossed, 0.95)) : "replicas: one server"
    print(String(format: "live %d devices: signal p50 %.1f ms p95 %.1f ms p99 %.1f ms | visible p95 %.1f ms | rss per device %.1f KB | ",
                 deviceCount, percentile(final.signals, 0.5), percentile(final.signals, 0.95), percentile(final.signals, 0.99),
                 engines > 0 ? percentile(final.visible, 0.95) : .nan, perDeviceKiB) + replicas)
    exit(0)
}

switch arguments.count > 1 ? arguments[1] : "" {
case "serve": try await serve()
case "devices": try await devices()
default: fail(usage)
}
