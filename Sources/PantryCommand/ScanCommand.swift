import CommandLineSupport
import BarcodeImages
import EventualAPI
import ArgumentParser
import EventualKit
import Foundation
import Pantry

struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Buy something with a barcode: look it up, pick or create the product, put it in the pantry.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The barcode (EAN-13, EAN-8, UPC-A or GTIN-14).") var barcode: String?
    @Option(help: "Read the barcode from a photo (JPEG, PNG or HEIC; - reads standard input).") var image: String?
    // NB: `.unconditional` so that `--pick -1` is refused as a candidate, not as "Missing value".
    @Option(parsing: .unconditional, help: "Pick the N-th candidate (from 1).") var pick: Int?
    @Flag(name: .customLong("downvote-others"), help: "Rate every other candidate -1.") var downvoteOthers = false
    @Flag(name: .customLong("new"), help: "Create a new product (with --name); if one with that name exists, vote for it instead.")
    var createNew = false
    @Flag(help: "With --new: post the product even if a candidate has the same name.") var force = false
    @Option(help: "The new product's name.") var name: String?
    @Option(help: "The new product's description.") var description: String?
    @OptionGroup var item: ItemOptions
    @OptionGroup var destination: DestinationOptions

    func validate() throws {
        if (barcode == nil) == (image == nil) { throw ValidationError("Give a barcode or --image PHOTO (one of them)") }
        if createNew, name == nil { throw ValidationError("--new needs --name NAME") }
        if createNew, pick != nil { throw ValidationError("Use --pick or --new, not both") }
        if force, !createNew { throw ValidationError("--force goes with --new") }
        if let pick, !(1...Self.maxPick).contains(pick) { throw ValidationError("--pick \(pick) is not a candidate: they are numbered from 1") }
    }

    /// More candidates than any barcode has; a larger --pick is a typing mistake.
    static let maxPick = 10_000

    func run() async throws {
        // NB: checked as every app checks a photo, before anything opens a connection.
        let photo = try image.map { try CommandFile.photo($0, option: "--image") }
        defer { photo?.remove() }
        let app = try global.app()
        let pantry = try await app.open()
        var code = barcode ?? ""
        if let photo {
            let found: [String]
            do { found = try await BarcodeReader().read(contentsOf: photo.url) } catch let error as ScanError {
                // NB: named as the person gave it (standard input has no path of theirs).
                throw CLIError(error.description.replacingOccurrences(of: photo.url.path, with: photo.name))
            }
            code = found[0]
            print("Read \(code) from \(photo.name).")
        }
        let details = try item.details()
        let space = try destination.space(in: pantry)
        var candidates: [ProductCandidate] = []
        do {
            let lookup = try await pantry.knowledgeBase.lookup(code)
            candidates = lookup.candidates
            if lookup.source == .cache, !candidates.isEmpty {
                let age = lookup.fetchedAt.map { " from " + RelativeDay.ago($0, now: UnixMillis.now()) } ?? ""
                print(Terminal.paint("Offline: showing the saved copy\(age).", .yellow))
            }
        } catch PantryError.noSavedCopy where createNew {
            // NB: offline with nothing saved, creating the product is still possible.
        }
        let choice = try choose(candidates, barcode: code)
        let purchase = try await pantry.buy(barcode: code, candidates: candidates, choice: choice, details: details, space: space?.id)
        let report = await pantry.device.sync(.localBudget, pull: false)
        var line = "Added \(purchase.item.name) (\(String(purchase.item.id.suffix(8))))\(DestinationOptions.to(space))"
        if let expires = purchase.item.expiresOn { line += ", expires \(RelativeDay.describe(expires, today: Day(date: Date())))" }
        print(line + ".")
        if report.rejected > 0 { DeliveryNote.sayWaiting(after: report, of: pantry) }
        let contributions = (purchase.postsNewProduct ? 1 : 0) + purchase.votes
        if contributions > 0 {
            if report.calls >= contributions {
                print(purchase.postsNewProduct ? "Posted the new product to the knowledge base." : "Voted on the knowledge base.")
            } else {
                print(Terminal.paint(DeliveryNote.waiting("your contribution to the knowledge base", after: report), .yellow))
            }
        }
    }

    private func choose(_ candidates: [ProductCandidate], barcode: String) throws -> ProductChoice {
        if createNew, let name {
            // NB: the same product under the same name twice splits its votes: vote for it instead.
            if !force, let index = candidates.firstIndex(where: { ProductCandidate.sameName($0.name, name) }) {
                let existing = candidates[index]
                print(existing.isPending
                      ? "\(existing.name) is already your product of \(barcode) (not sent yet): using it (--force posts another one)."
                      : "\(existing.name) is already a product of \(barcode): voting for it instead (--force posts a new one).")
                return .pick(index + 1, downvoteOthers: downvoteOthers)
            }
            return .new(name: name, description: description)
        }
        if let pick { return .pick(pick, downvoteOthers: downvoteOthers) }
        guard !candidates.isEmpty else { throw PantryError.noCandidates(barcode: barcode) }
        print(CandidateTable.render(candidates))
        guard Terminal.stdinIsTTY else {
            throw CLIError("\(candidates.count) candidate(s): choose one with --pick N, or create one with --new --name NAME")
        }
        let answer = try Terminal.ask("Pick 1-\(candidates.count), or n for a new product: ")?.trimmingCharacters(in: .whitespaces) ?? ""
        if answer.lowercased() == "n" {
            let name = try Terminal.ask("Name of the new product: ")?.trimmingCharacters(in: .whitespaces) ?? ""
            guard !name.isEmpty else { throw CLIError("No name given: nothing was added") }
            return .new(name: name, description: description)
        }
        guard let number = Int(answer) else { throw CLIError("Nothing picked: nothing was added") }
        return .pick(number, downvoteOthers: downvoteOthers)
    }
}
