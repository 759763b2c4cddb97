import CommandLineSupport
import Pantry

/// The candidates of a barcode, numbered for `--pick`.
enum CandidateTable {
    static func render(_ candidates: [ProductCandidate]) -> String {
        var table = Table("#", "PRODUCT", "SCORE", "DESCRIPTION")
        for (index, candidate) in candidates.enumerated() {
            table.add(.init("\(index + 1)"), .init(candidate.name + (candidate.isPending ? " (yours, not sent yet)" : "")),
                      .init("\(candidate.score)"), .init(candidate.description ?? ""))
        }
        return table.render()
    }
}
