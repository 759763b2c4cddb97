import EventualAPI
// Seeds a pantry of many items straight into the signed-in user's database, then measures the
// library's search call (p95 over many queries) and `pantry list --expiring 3d --json` as a
// process (median wall time). Run by scripts/bench-pantry.sh, which starts the server.
// Usage: pantry-bench SERVER_URL DATA_DIR PANTRY_EXECUTABLE [ITEMS] [PRODUCTS_CSV]
import EventualKit
import Foundation
import GRDB
import Pantry

let arguments = CommandLine.arguments
guard arguments.count >= 4, let server = URL(string: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: pantry-bench SERVER_URL DATA_DIR PANTRY_EXECUTABLE [ITEMS] [PRODUCTS_CSV]\n".utf8))
    exit(2)
}
let dataDirectory = URL(fileURLWithPath: arguments[2], isDirectory: true)
let executable = arguments[3]
let itemCount = arguments.count > 4 ? Int(arguments[4]) ?? 100_000 : 100_000
let csvPath = arguments.count > 5 ? arguments[5] : "SampleData/off-products-1000-slim.csv"

/// A small deterministic generator, so every run seeds the same pantry.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Product names and categories from the Open Food Facts sample (© Open Food Facts contributors, ODbL).
func loadProducts() -> [(name: String, category: String)] {
    guard let text = try? String(contentsOfFile: csvPath, encoding: .utf8) else {
        return (0..<500).map { ("Product \($0) pasta milk tea", "category\($0 % 20)") }
    }
    var products: [(String, String)] = []
    // NB: the file ends its lines with CRLF, one Character in Swift: split on any newline.
    for line in text.split(whereSeparator: \.isNewline).dropFirst() {
        let fields = line.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count > 8 else { continue }
        let name = fields[1].trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        guard !name.isEmpty, !name.contains("\"") else { continue }
        let category = fields[8].replacingOccurrences(of: "en:", with: "")
        products.append((name, category == "null" || category.hasPrefix("\"") ? "other" : category))
    }
    return products.isEmpty ? [("Sample pasta", "pasta")] : products
}

func ms(_ duration: Duration) -> Double {
    duration.fractionalMilliseconds
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
}

// 1. A signed-in user on a fresh device.
try? FileManager.default.removeItem(at: dataDirectory)
let app = PantryApp(configuration: PantryConfiguration(dataDirectory: dataDirectory, serverURL: server))
let suffix = UUID().uuidString.prefix(8).lowercased()
let email = "bench.\(suffix)@example.com"
_ = try await app.register(username: "bench_\(suffix)", email: email, password: "bench-password")
let pantry = try await app.login(email: email, password: "bench-password").pantry

// 2. Seed straight into the database (the FTS triggers index every row).
let products = loadProducts()
let places = ["Coop, Via Roma 1", "Esselunga, Viale Pepoli", "Conad, Piazza Maggiore", "Market, Via Indipendenza", "Lidl"]
let today = Day(date: Date())
let now = UnixMillis.now()
let seedStart = ContinuousClock.now
try await pantry.store.write { tx in
    var random = SplitMix(state: 42)
    let statement = try tx.db.makeStatement(sql: """
        INSERT INTO pantry_items (id, barcode, name, quantity, unit, category, expiresOn, boughtAt, place, status)
        VALUES (?, NULL, ?, ?, 'pcs', ?, ?, ?, ?, 'inPantry')
        """)
    for index in 0..<itemCount {
        let product = products[Int.random(in: 0..<products.count, using: &random)]
        let expires = Bool.random(using: &random) ? today.adding(days: Int.random(in: -10...120, using: &random)).description : nil
        try statement.execute(arguments: [
            UUIDv7.make(millis: now - Int64(index)), product.name, Double(Int.random(in: 1...6, using: &random)),
            product.category, expires, now - Int64.random(in: 0...(90 * 86_400_000), using: &random),
            places[Int.random(in: 0..<places.count, using: &random)],
        ])
    }
}
print("seeded \(itemCount) items in \(String(format: "%.1f", ms(ContinuousClock.now - seedStart) / 1000)) s")

// 3. Search: words people type, drawn from the product names (whole words and prefixes).
let words = products.flatMap { $0.name.split(whereSeparator: { !$0.isLetter }).map(String.init) }.filter { $0.count >= 3 }
var queries: [String] = []
var queryRandom = SplitMix(state: 43)
for _ in 0..<1000 {
    let word = words[Int.random(in: 0..<words.count, using: &queryRandom)]
    queries.append(Bool.random(using: &queryRandom) ? word : String(word.prefix(max(3, word.count - 2))))
}
for query in queries.prefix(50) { _ = try pantry.items.search(query) }  // warm the page cache
var timings: [Double] = []
var hits = 0
let clock = ContinuousClock()
for query in queries {
    let start = clock.now
    hits += try pantry.items.search(query).count
    timings.append(ms(clock.now - start))
}
let searchP95 = percentile(timings, 0.95)
print(String(format: "search: %d queries, p50 %.3f ms, p95 %.3f ms, %.1f results each", timings.count,
             percentile(timings, 0.5), searchP95, Double(hits) / Double(timings.count)))

// 4. `pantry list --expiring 3d --json` as a process, as a person runs it.
func runList() throws -> (Double, Int) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = ["list", "--expiring", "3d", "--json", "--data-dir", dataDirectory.path, "--server", server.absoluteString]
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("pantry-bench-\(UUID().uuidString).json")
    FileManager.default.createFile(atPath: output.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: output) }
    process.standardOutput = try FileHandle(forWritingTo: output)
    let start = clock.now
    try process.run()
    process.waitUntilExit()
    let elapsed = ms(clock.now - start)
    guard process.terminationStatus == 0 else { throw NSError(domain: "pantry list failed", code: Int(process.terminationStatus)) }
    let items = (try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [Any])?.count ?? 0
    return (elapsed, items)
}
_ = try runList()
var listTimings: [Double] = []
var listed = 0
for _ in 0..<10 {
    let (elapsed, count) = try runList()
    listTimings.append(elapsed)
    listed = count
}
let listMedian = percentile(listTimings, 0.5)
print(String(format: "list process: %d items listed, median %.1f ms, max %.1f ms over %d runs", listed, listMedian,
             listTimings.max() ?? 0, listTimings.count))
print(String(format: "search p95 %.2f ms | list process %.0f ms", searchP95, listMedian))
