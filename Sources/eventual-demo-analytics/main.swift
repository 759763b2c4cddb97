// Fills a running server with a week of usage from simulated people, through EventualKit's
// `Analytics` as the apps record it: each person has a phone (a local store, a session, the
// engine) and records what they did over the last seven days, then the engine sends it.
//   eventual-demo-analytics [--server URL] [--users N] [--seed S]
// People register as demo-N-<run>@demo.example (password "demo-password"); the last line is
//   demo: U users, E events recorded, S sent, R refused
import EventualAPI
import EventualKit
import Foundation

struct Options {
    var server = URL(string: "http://127.0.0.1:8080")!
    var users = 300
    var seed: UInt64 = 42

    init(_ arguments: [String]) throws {
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw Failure(description: "\(flag) needs a value") }
            switch flag {
            case "--server":
                guard let url = URL(string: value), url.scheme?.hasPrefix("http") == true else { throw Failure(description: "--server must be an http URL") }
                server = url
            case "--users":
                guard let count = Int(value), (1...5000).contains(count) else { throw Failure(description: "--users must be 1 to 5000") }
                users = count
            case "--seed":
                guard let number = UInt64(value) else { throw Failure(description: "--seed must be a number") }
                seed = number
            default: throw Failure(description: "unknown option \(flag): use --server URL, --users N, --seed S")
            }
        }
    }
}

struct Failure: Error, CustomStringConvertible { let description: String }

/// SplitMix64, so one seed makes the same week.
struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The week of one simulated person in one app, as (time, event) pairs.
enum Week {
    static let hour: Int64 = 3_600_000
    static let trash = ["plastic", "glass", "paper", "cardboard", "metal", "organic", "batteries"]
    static let points = ["ML building", "SD library", "Central plaza", "W cafeteria", "Lleras gate", "B building", "Gym"]
    static let shops = ["Éxito", "Carulla", "Juan Valdez", "D1", "Ara", "Crepes & Waffles", "Falabella"]

    /// A time on day `day` (0 = seven days ago) around `hour` (UTC), spread by ±`spread` hours.
    static func at(_ start: Int64, day: Int, hour: Double, spread: Double, _ random: inout Seeded) -> Int64 {
        let jitter = Double.random(in: -spread...spread, using: &random)
        return start + Int64(day) * 24 * Self.hour + Int64((hour + jitter) * Double(Self.hour))
    }

    static func sustainU(start: Int64, eager: Double, _ random: inout Seeded) -> [(Int64, AnalyticsEvent)] {
        var events: [(Int64, AnalyticsEvent)] = []
        for day in 0..<7 {
            let reminder = at(start, day: day, hour: 15, spread: 0.02, &random)  // 10:00 in Bogotá
            events.append((reminder, .notificationShown(.dailyReminder)))
            guard Double.random(in: 0...1, using: &random) < eager else { continue }
            var time = Bool.random(using: &random) ? reminder + Int64.random(in: 60_000...(2 * hour), using: &random)
                : at(start, day: day, hour: Double.random(in: 12...26, using: &random), spread: 0.5, &random)
            if time > reminder && time < reminder + 20 * 60_000 { events.append((time - 30_000, .notificationOpened(.dailyReminder))) }
            events.append((time, .login))
            events.append((time + 1_000, .appOpened))
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                time += Int64.random(in: 20_000...300_000, using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0...3:
                    let type = trash[Int(Double(trash.count) * pow(Double.random(in: 0..<1, using: &random), 1.6))]
                    events.append((time, .scanStarted))
                    let answer = Duration.milliseconds(Int.random(in: 700...2500, using: &random) + (type == "batteries" ? 2000 : 0))
                    events.append((time + answer.milliseconds, .scanAnswered(trashType: type, after: answer)))
                case 4...6:
                    events.append((time, .mapOpened(from: Int.random(in: 0..<10, using: &random) < 7 ? .navbar : .main)))
                    let point = points[Int(Double(points.count) * pow(Double.random(in: 0..<1, using: &random), 2))]
                    events.append((time + 40_000, .pointVisited(point)))
                default:
                    let type = trash.randomElement(using: &random)!
                    let seconds = Duration.milliseconds(Int.random(in: 4_000...(type == "batteries" ? 90_000 : 40_000), using: &random))
                    events.append((time, .tipOpened(trashType: type)))
                    events.append((time + seconds.milliseconds, .tipClosed(trashType: type, after: seconds)))
                }
            }
        }
        return events
    }

    static func spendiQ(start: Int64, _ random: inout Seeded) -> [(Int64, AnalyticsEvent)] {
        var events: [(Int64, AnalyticsEvent)] = []
        for day in 0..<7 where Int.random(in: 0..<10, using: &random) < 7 {
            var time = at(start, day: day, hour: Double.random(in: 12...27, using: &random), spread: 1, &random)
            events += [(time, .login), (time + 500, .appOpened), (time + 1_000, .dashboardOpened)]
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                time += Int64.random(in: 30_000...600_000, using: &random)
                let income = Int.random(in: 0..<8, using: &random) == 0
                events.append((time, .transactionRecorded(income ? .income : .expense,
                                                          amountMinor: Int64(Int.random(in: income ? 200_000...2_000_000 : 4_000...180_000, using: &random)),
                                                          currency: "COP")))
            }
            if Bool.random(using: &random) {
                time += 60_000
                events.append((time, .offersOpened(online: Int.random(in: 0..<5, using: &random) > 0)))
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let shop = shops[Int(Double(shops.count) * pow(Double.random(in: 0..<1, using: &random), 1.5))]
                    events.append((time + 20_000, .offerViewed("offer-\(shop.prefix(3))-\(Int.random(in: 1...5, using: &random))", shop: shop)))
                }
            }
            if Int.random(in: 0..<6, using: &random) == 0 { events.append((time + 90_000, .limitExceeded(category: "food"))) }
            if Int.random(in: 0..<4, using: &random) == 0 { events.append((time + 2_000, .insightShown("spending_up"))) }
        }
        return events
    }

    static func pantry(start: Int64, _ random: inout Seeded) -> [(Int64, AnalyticsEvent)] {
        var events: [(Int64, AnalyticsEvent)] = []
        for day in 0..<7 where Int.random(in: 0..<10, using: &random) < 4 {
            var time = at(start, day: day, hour: 23, spread: 2, &random)
            events.append((time, .login))
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                time += Int64.random(in: 10_000...90_000, using: &random)
                let roll = Int.random(in: 0..<10, using: &random)
                events.append((time, .productScanned(roll < 6 ? .known : roll < 9 ? .unknown : .offline)))
                if roll < 6 { events.append((time + 5_000, .productVoted(rating: 1))) }
                else if roll < 9 { events.append((time + 20_000, .productPosted)) }
            }
        }
        return events
    }
}

func simulate(_ options: Options) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("eventual-demo-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let run = String(UUID().uuidString.prefix(6)).lowercased()
    let start = (UnixMillis.now() / 86_400_000 - 7) * 86_400_000
    var random = Seeded(state: options.seed)
    var (recorded, sent, refused) = (0, 0, 0)
    for person in 0..<options.users {
        let email = "demo-\(person)-\(run)@demo.example", password = "demo-password"
        let phone = folder.appendingPathComponent("p\(person)")
        let store = try LocalStore(path: phone.appendingPathComponent("store.sqlite").path)
        let vault = SessionVault(secrets: FileSecretStore(directory: phone.appendingPathComponent("secrets")), rounds: 100_000)
        let link = ServerLink(serverURL: options.server) { vault.accessToken }
        guard case .created = try await link.client.register(body: .json(.init(username: "demo_\(person)_\(run)", email: email, password: password))) else {
            throw Failure(description: "registering \(email) failed: is \(options.server) an Eventual server that allows many registrations?")
        }
        try await vault.signIn(email: email, password: password, client: link.client)
        let platform = Int.random(in: 0..<10, using: &random) < 6 ? "android" : "ios"
        // Most people use SustainU; some SpendiQ; a few the pantry (on their laptop).
        var apps: [(String, String, [(Int64, AnalyticsEvent)])] = [
            ("sustainu", platform, Week.sustainU(start: start, eager: Double.random(in: 0.3...0.95, using: &random), &random)),
        ]
        if Int.random(in: 0..<10, using: &random) < 5 { apps.append(("spendiq", platform, Week.spendiQ(start: start, &random))) }
        if Int.random(in: 0..<10, using: &random) < 2 { apps.append(("pantry", "linux", Week.pantry(start: start, &random))) }
        for (app, platform, events) in apps {
            let analytics = Analytics(store: store, app: app, appVersion: "1.0.0", platform: platform)
            for (time, event) in events.sorted(by: { $0.0 < $1.0 }) where time < UnixMillis.now() {
                switch await analytics.record(event, at: time) {
                case .recorded: recorded += 1
                default: refused += 1
                }
            }
        }
        let engine = SyncEngine(store: store, link: link)
        let report = await engine.syncNow()
        if let failure = report.failure { throw Failure(description: "sending \(email)'s events failed: \(failure)") }
        sent += report.events
        if person % 50 == 49 { FileHandle.standardError.write(Data("\(person + 1) people, \(sent) events sent\n".utf8)) }
    }
    print("demo: \(options.users) users, \(recorded) events recorded, \(sent) sent, \(refused) refused")
}

do {
    try await simulate(try Options(CommandLine.arguments))
} catch let failure as Failure {
    FileHandle.standardError.write(Data("demo failed: \(failure)\n".utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("demo failed: \(RemoteFailure.from(error).description)\n".utf8))
    exit(1)
}
