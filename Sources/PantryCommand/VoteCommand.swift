import CommandLineSupport
import ArgumentParser
import EventualAPI
import Foundation
import Pantry

struct Vote: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rate a product of the knowledge base from -5 to 5; offline, the vote waits and is sent later.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "A barcode (then pick one of its products), or a product's id.") var productOrBarcode: String
    // NB: `.unconditional` so that `--rating -5` is read as a rating, not as an option.
    @Option(parsing: .unconditional, help: "From -5 (wrong) to 5 (right); 0 takes your rating back.") var rating: Int
    @Option(parsing: .unconditional, help: "With a barcode: the N-th candidate (from 1), as `pantry scan` lists them.") var pick: Int?

    func validate() throws {
        guard KnowledgeBase.ratings.contains(rating) else { throw ValidationError(PantryError.invalidRating(rating).description) }
        if let pick, !(1...Scan.maxPick).contains(pick) { throw ValidationError("--pick \(pick) is not a candidate: they are numbered from 1") }
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let barcode: GTIN
        let productId: String
        var productName: String?
        if let gtin = try? GTIN(scanned: productOrBarcode) {
            let product = try await choose(try await pantry.knowledgeBase.lookup(productOrBarcode))
            barcode = gtin
            productId = try product.id ?? { throw CLIError("\(product.name) has not reached the server yet: vote after pantry sync") }()
            productName = product.name
        } else if let known = try pantry.knowledgeBase.barcode(ofProduct: productOrBarcode) {
            barcode = known
            productId = productOrBarcode
        } else {
            throw PantryError.unknownProduct(productOrBarcode)
        }
        try await pantry.vote(barcode: barcode.normalized, productId: productId, rating: rating)
        let report = await pantry.device.sync(.localBudget, pull: false)
        print("Voted \(rating > 0 ? "+" : "")\(rating) for \(productName ?? productId) (\(barcode.shortForm)).")
        if report.calls < 1 {
            print(Terminal.paint(DeliveryNote.waiting("your vote", after: report), .yellow))
        }
    }

    private func choose(_ lookup: ProductLookup) async throws -> ProductCandidate {
        let candidates = lookup.candidates
        guard !candidates.isEmpty else { throw PantryError.noCandidates(barcode: lookup.barcode.shortForm) }
        if let pick {
            guard pick <= candidates.count else { throw PantryError.pickOutOfRange(pick, count: candidates.count) }
            return candidates[pick - 1]
        }
        if candidates.count == 1 { return candidates[0] }
        print(CandidateTable.render(candidates))
        guard Terminal.stdinIsTTY else { throw CLIError("\(candidates.count) candidates: choose one with --pick N") }
        let answer = try Terminal.ask("Pick 1-\(candidates.count): ")?.trimmingCharacters(in: .whitespaces) ?? ""
        guard let number = Int(answer), (1...candidates.count).contains(number) else { throw CLIError("Nothing picked: no vote was cast") }
        return candidates[number - 1]
    }
}
