import ArgumentParser
import BarcodeImages
import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Recycling

struct ScanItem: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Which bin does it go in? Scan a photo and/or a barcode; offline it waits and is classified later.",
        usage: "sustainu scan (--image PHOTO | --barcode CODE | both) [--at LAT,LON]\n              [--point ID] [--json]",
        discussion: """
            Online, the server answers with the trash type, the bin and your points. Offline, the photo is \
            copied into the app's data folder and the scan waits; a barcode (given, or found in the photo) \
            is answered at once from the saved packaging catalogue, as an offline guess.
            """
    )
    @OptionGroup var global: GlobalOptions
    @Option(help: "A JPEG, PNG or HEIC photo of the item (at most 20 MiB); - reads it from standard input.") var image: String?
    @Option(name: .customLong("barcode"), help: "The item's barcode (EAN-8, UPC-A, EAN-13 or GTIN-14).") var typedBarcode: String?
    @Option(help: "Where you are, as LAT,LON: special waste gets the nearest point that takes it.") var at: String?
    @Option(help: "The recycling point where you throw it (an id from `sustainu points`).") var point: String?
    @OptionGroup var output: OutputOptions

    /// The barcode as typed, without the spaces a paste brings along.
    var barcode: String? { typedBarcode.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } }

    func validate() throws {
        try usageCheck {
            if image == nil && barcode == nil { throw RecyclingError.nothingToScan }
            if let barcode, (try? GTIN(barcode)) == nil { throw RecyclingError.invalidBarcode(typedBarcode ?? barcode) }
            _ = try at.map(Position.parse)
            if let point, point.trimmingCharacters(in: .whitespaces).isEmpty { throw CLIError("--point needs a point's id, as `sustainu points` lists them") }
        }
    }

    func run() async throws {
        // NB: checked as every app checks a photo, before anything opens a connection.
        let photo = try image.map { try CommandFile.photo($0, option: "--image") }
        defer { photo?.remove() }
        let recycling = try await global.open()
        var code = barcode
        if code == nil, let photo {
            // NB: a packaged product's barcode in the photo lets the device answer offline.
            code = (try? await BarcodeReader().read(contentsOf: photo.url))?.first { (try? GTIN($0)) != nil }
        }
        let outcome: ScanOutcome
        do {
            outcome = try await recycling.scan(photo: photo?.url, barcode: code, at: try at.map(Position.parse), pointID: point)
        } catch RecyclingError.photo(_, let problem) where photo != nil {
            throw CLIError("\(photo!.name): \(problem)")
        }
        let scan = outcome.scan
        if output.json {
            print(try Terminal.json(ScanJSON(scan)))
        } else if scan.state != .failed {
            // NB: a refusal is said once, on stderr, below.
            // NB: after a photo's scan, "a photo of it may tell" would send the student round in a circle.
            say(ScanText.describe(scan, reason: outcome.reason, photoMayTell: photo == nil && recycling.serverClassifiesPhotos()))
        }
        await announceClassified(recycling, json: output.json)
        if scan.state == .failed { throw CLIError("The server could not classify this scan: \(scan.message ?? "no reason given")") }
    }
}

struct Scans: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Your scans: waiting, classified, or failed with the reason; marked when one waits to be sent or was refused.",
        usage: "sustainu scans [--json] [--watch [--every SECONDS]]",
        discussion: "Example: sustainu scans --watch")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup var watching: WatchOptions

    func run() async throws {
        let recycling = try await global.open(network: false)
        let json = output.json
        guard watching.watch else {
            print(try Self.render(try await recycling.allScans(), json: json))
            return
        }
        try await watching.run(recycling.watchScans(), json: json, engine: recycling.device.engine) { scans in
            try Self.render(scans, json: json, oneLine: true)
        }
    }

    /// The scans as a table with their marks, or as JSON (`oneLine`: one document per line, for `--watch`).
    static func render(_ scans: [Scan], json: Bool, oneLine: Bool = false) throws -> String {
        if json { return oneLine ? try Terminal.jsonLine(scans.map(ScanJSON.init)) : try Terminal.json(scans.map(ScanJSON.init)) }
        guard !scans.isEmpty else { return "No scans yet: sustainu scan --image PHOTO, or --barcode CODE" }
        let marks = scans.map { SyncMark($0.syncState) }
        let marked = marks.contains { $0 != .none }
        var table = Table()
        table.headers = (marked ? [""] : []) + ["WHEN", "STATE", "ITEM", "BIN", "POINTS", "NOTE"]
        table.whole = [""]
        // NB: the note (a reason, a nearest point) takes the width the short columns leave (a
        // long product name is cut to leave it some); on a narrow screen it gives way first.
        table.cutFirst = ["NOTE"]
        for (scan, mark) in zip(scans, marks) {
            let colour: Terminal.Colour? = switch scan.state {
            case .waiting: .yellow
            case .failed: .red
            case .classified: scan.detected == false ? .yellow : nil
            }
            let cells: [Table.Cell] = [.init(ScanText.when(scan.takenAt)), .init(ScanText.state(scan), colour), .init(Table.cut(ScanText.item(scan), to: 24)),
                                       .init(scan.bin ?? "-"), .init(scan.points.map { $0 > 0 ? "+\($0)" : "0" } ?? "-"), .init(ScanText.note(scan))]
            table.rows.append((marked ? [Table.Cell(mark.rawValue, mark == .refused ? .red : .yellow)] : []) + cells)
        }
        let parts = scans.contains { $0.parts.count > 1 } ? Terminal.wrap("The parts of each, and their bins: sustainu scans --json") : nil
        return [table.render(), SyncMark.legend(marks, failures: "sustainu failures"), parts].compactMap { $0 }.joined(separator: "\n")
    }
}

/// A scan as `scan --json` and `scans --json` print it: every key present, null when not known.
struct ScanJSON: Encodable {
    let id: String
    /// The id's last 8 characters, as the table shows it (a command takes either).
    let shortId: String
    let state: String
    @JSONNullable var detected: Bool?
    @JSONNullable var trashType: String?
    @JSONNullable var bin: String?
    @JSONNullable var binLabel: String?
    let parts: [PartJSON]
    @JSONNullable var points: Int?
    let offlineGuess: Bool
    @JSONNullable var message: String?
    let takenAt: String
    @JSONNullable var barcode: String?
    @JSONNullable var productName: String?
    @JSONNullable var pointId: String?
    @JSONNullable var specialPoint: String?
    /// The special point's id (`sustainu point ID`) and how far it is from where the scan was taken.
    @JSONNullable var specialPointId: String?
    @JSONNullable var specialPointDistanceMeters: Double?
    let syncState: SyncStateJSON

    /// One part of the packaging, and its bin.
    struct PartJSON: Encodable {
        let material: String
        @JSONNullable var shape: String?
        @JSONNullable var grams: Double?
        let bin: String
        let binLabel: String
    }

    init(_ scan: Scan) {
        id = scan.id
        shortId = String(scan.id.suffix(8))
        state = scan.state.rawValue
        detected = scan.detected
        trashType = scan.trashType
        bin = scan.bin
        binLabel = scan.binLabel
        parts = scan.parts.map { part in
            PartJSON(material: part.material.rawValue, shape: part.shape, grams: part.grams,
                     bin: part.trashType.bin.colour, binLabel: part.trashType.bin.label)
        }
        points = scan.points
        offlineGuess = scan.offlineGuess
        message = scan.message
        takenAt = Timestamp.iso8601(scan.takenAt)
        barcode = scan.barcode
        productName = scan.productName
        pointId = scan.pointId
        specialPoint = scan.specialPoint
        specialPointId = scan.specialPointId
        specialPointDistanceMeters = scan.specialPointMeters.map { ($0 * 10).rounded() / 10 }
        syncState = SyncStateJSON(scan.syncState)
    }
}

/// How a scan reads for people.
enum ScanText {
    /// - Parameter photoMayTell: false when the server said it cannot classify photos.
    static func describe(_ scan: Scan, reason: String?, photoMayTell: Bool = true) -> String {
        switch scan.state {
        case .classified:
            guard scan.detected != false, let type = scan.trashType, let label = scan.binLabel else {
                // NB: the server's message says what happened: a product it knows whose packaging
                // it does not is not "no item detected".
                let what = scan.message ?? "No item detected."
                return scan.source == "none" && photoMayTell ? what + "\nA photo of it may tell: sustainu scan --image PHOTO" : what
            }
            var line = (scan.productName.map { "\($0): " } ?? "") + "\(type) → \(label)."
            if let special = scan.specialPoint {
                let away = scan.specialPointMeters.map { ", \(Points.distance($0)) away" } ?? ""
                line += " Nearest: \(special)\(away)" + (scan.specialPointId.map { " (sustainu point \($0))" } ?? "") + "."
            }
            if let points = scan.points { line += points > 0 ? " " + Terminal.paint("+\(points) points", .green) : " No points (today's limit is reached)." }
            return ([line] + partLines(scan.parts)).joined(separator: "\n")
        case .waiting:
            var lines: [String] = []
            if scan.offlineGuess, let type = scan.trashType, let label = scan.binLabel {
                lines.append("\(type) → \(label) " + Terminal.paint("(offline guess, confirmed when back online)", .yellow))
                lines += partLines(scan.parts)
            }
            let why = reason == "offline" || reason == nil ? "you are offline" : reason!
            lines.append("Saved: \(why); the scan waits on this device and is classified when the server can be reached (sustainu scans).")
            return lines.joined(separator: "\n")
        case .failed:
            return "Failed: \(scan.message ?? "refused by the server")"
        }
    }

    /// A packaging of several parts: each part and its bin (they may differ: a cardboard sleeve,
    /// a plastic film).
    static func partLines(_ parts: [PackagingPart]) -> [String] {
        guard parts.count > 1 else { return [] }
        return ["Its packaging goes apart:"] + parts.map { part in
            "  \(part.material.rawValue)\(part.shape.map { " (\($0.lowercased()))" } ?? "") → \(part.trashType.bin.label)"
        }
    }

    /// The STATE column of `scans`: "unknown" for an answer that could not say what it is.
    static func state(_ scan: Scan) -> String {
        scan.state == .classified && scan.detected == false ? "unknown" : scan.state.rawValue
    }

    /// The ITEM column of `scans`: what it is, else the product's name, else its barcode.
    static func item(_ scan: Scan) -> String {
        scan.trashType ?? scan.productName ?? scan.barcode.map { "barcode \((try? GTIN($0).shortForm) ?? $0)" } ?? "photo"
    }

    /// The NOTE column of `scans`.
    static func note(_ scan: Scan) -> String {
        if scan.offlineGuess { return "offline guess" }
        switch scan.state {
        case .classified where scan.detected == false: return scan.source == "none" ? "packaging not known" : "no item detected"
        // NB: what to type next is said under the table, where 80 columns never cut it.
        case .classified: return scan.specialPoint ?? (scan.parts.count > 1 ? "\(scan.parts.count) parts" : "")
        case .waiting, .failed: return scan.message ?? ""
        }
    }

    static func when(_ millis: Int64) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }
}
