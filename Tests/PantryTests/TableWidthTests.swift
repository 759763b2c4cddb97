@testable import CommandLineSupport
import Foundation
import Testing

/// Tables measure what a terminal shows: CJK and emoji take two columns, combining marks and
/// joiners none, so names in any script line up and fit the width.
@Suite("Tables count terminal columns, not characters", .timeLimit(.minutes(2)))
struct TableWidthTests {
    @Test func wideCharactersTakeTwoColumnsAndJoinersNone() {
        #expect(DisplayWidth.of("Oat milk") == 8)
        #expect(DisplayWidth.of("飲み物") == 6)
        #expect(DisplayWidth.of("🥛 Oat milk") == 11)
        #expect(DisplayWidth.of("우유") == 4)
        #expect(DisplayWidth.of("ｍｉｌｋ") == 8)
        // One family emoji of three people and two joiners; an accent as a combining mark; a zero-width space
        #expect(DisplayWidth.of("👩\u{200D}👩\u{200D}👧") == 2)
        #expect(DisplayWidth.of("Cafe\u{301}") == 4)
        #expect(DisplayWidth.of("a\u{200B}b") == 2)
        #expect(DisplayWidth.of("☕\u{FE0F}") == 2 && DisplayWidth.of("#\u{FE0F}\u{20E3}") == 2)
    }

    @Test func cellsArePaddedAndCutByColumns() {
        // Given names in several scripts
        var table = Table("NAME", "CATEGORY", "QTY")
        table.add("🥛 Oat milk", "飲み物", "1")
        table.add("Cafe\u{301}", "drinks", "2")
        table.add("👩\u{200D}👩\u{200D}👧 family pack", "家族", "3")
        // When rendered
        let lines = table.render(width: 80).split(separator: "\n").map(String.init)
        // Then each column starts at the same terminal column on every line
        let starts = lines.map { line in DisplayWidth.of(String(line[..<line.range(of: "  ", options: .backwards)!.upperBound])) }
        #expect(Set(starts).count == 1, "\(lines)")
        // And a cut never splits a wide character past the width
        let cut = Table.cut("飲み物と食べ物", to: 6)
        #expect(cut == "飲み…" && DisplayWidth.of(cut) == 5)
        #expect(DisplayWidth.of(Table.cut("🥛🥛🥛🥛", to: 4)) <= 4)
    }

    @Test func proseWrapsByColumns() {
        let text = Array(repeating: "飲み物を買う", count: 10).joined(separator: " ") + " " + String(repeating: "抹", count: 30)
        let lines = Terminal.wrap(text, width: 20).split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 20 }, "\(lines)")
        #expect(lines.count == 11 && lines.last?.hasSuffix("…") == true, "\(lines)")
    }

    @Test(.tags(.endToEnd)) func aPantryOfEmojiAndCJKNamesFitsEightyColumns() async throws {
        try await withLiveServer { server, scratch in
            let (pantry, _) = try await signedInProcess(server, scratch)
            // Given items named with emoji and a category in Japanese
            #expect(try await pantry.run(["add", "--name", "🥛 Oat milk", "--category", "飲み物", "--where", "コンビニ"]).status == 0)
            #expect(try await pantry.run(["add", "--name", String(repeating: "抹茶", count: 30), "--category", "tea"]).status == 0)
            #expect(try await pantry.run(["add", "--name", "Salt", "--category", "spices"]).status == 0)
            // (sent, so that no row is marked as waiting: a command waits only 300 ms for the server)
            _ = try await pantry.run(["sync"])
            // When listed in 80 columns
            let list = try await pantry.run(["list"], environment: ["COLUMNS": "80"])
            let lines = list.stdout.split(separator: "\n").map(String.init)
            // Then every line fits on screen, and the columns line up under their headers
            #expect(lines.count == 4 && lines.allSatisfy { DisplayWidth.of($0) <= 80 }, "\(list.stdout)")
            let category = try #require(lines[0].range(of: "CATEGORY")).lowerBound
            let column = DisplayWidth.of(String(lines[0][..<category]))
            for line in lines.dropFirst() {
                let start = try #require(["飲み物", " tea ", "spices"].lazy.compactMap { line.range(of: $0) }.first, "\(line)").lowerBound
                let offset = line[start] == " " ? 1 : 0
                #expect(DisplayWidth.of(String(line[..<start])) + offset == column, "\(list.stdout)")
            }
        }
    }
}
