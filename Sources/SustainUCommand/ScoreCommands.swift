import ArgumentParser
import CommandLineSupport
import EventualAPI
import EventualKit
import Foundation
import Recycling

struct ScoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "score", abstract: "Your points, today, your streak and the last 14 days.",
                                                    usage: "sustainu score [--json]")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let recycling = try await global.open()
        let cached = try await recycling.score()
        let score = cached.value
        if output.json {
            struct Shape: Encodable {
                let total: Int64, today: Int, streak: Int, bestStreak: Int, awardedScansToday: Int, dailyCap: Int
                let days: [DayPoints]
                let fetchedAt: String
                let savedCopy: Bool
            }
            print(try Terminal.json(Shape(total: score.total, today: score.today, streak: score.streak, bestStreak: score.bestStreak,
                                          awardedScansToday: score.awardedScansToday, dailyCap: score.dailyCap, days: score.days,
                                          fetchedAt: Timestamp.iso8601(cached.fetchedAt),
                                          savedCopy: cached.source == .cache)))
        } else {
            if cached.source == .cache { print(Terminal.paint("Offline: your score as of \(age(cached.fetchedAt))", .yellow)) }
            say("\(score.total) points · today \(score.today) · streak \(score.streak) day\(score.streak == 1 ? "" : "s") (best \(score.bestStreak))")
            say("\(score.awardedScansToday) of the \(score.dailyCap) scans that earn points in any 24 hours used")
            print(BarChart.render(score.days.suffix(14).map { (String($0.day.suffix(5)), $0.points) }))
        }
        await announceClassified(recycling, json: output.json)
    }
}

struct Leaderboard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The people with the most points.", usage: "sustainu leaderboard [--limit N] [--json]")
    @OptionGroup var global: GlobalOptions
    // NB: unconditional, so that a negative number is refused as out of range, not "Missing value".
    @Option(parsing: .unconditional, help: "How many people (1 to 100).") var limit = 10
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try usageCheck { guard (1...100).contains(limit) else { throw RecyclingError.invalidLeaderboardLimit(limit) } }
    }

    func run() async throws {
        let recycling = try await global.open()
        let cached = try await recycling.leaderboard(limit: limit)
        if output.json {
            struct Shape: Encodable {
                let fetchedAt: String, savedCopy: Bool
                let entries: [LeaderboardEntry]
            }
            print(try Terminal.json(Shape(fetchedAt: Timestamp.iso8601(cached.fetchedAt), savedCopy: cached.source == .cache, entries: cached.value)))
        } else {
            if cached.source == .cache { print(Terminal.paint("Offline: the leaderboard as of \(age(cached.fetchedAt))", .yellow)) }
            var table = Table("#", "USER", "POINTS")
            for (rank, entry) in cached.value.enumerated() {
                let me = entry.username == recycling.session.username
                table.add(.init("\(rank + 1)"), .init(entry.username, me ? .bold : nil), .init("\(entry.total)"))
            }
            print(cached.value.isEmpty ? "Nobody has points yet: be the first (sustainu scan)." : table.render())
        }
        await announceClassified(recycling, json: output.json)
    }
}

struct Tips: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "What each kind of trash is, which bin takes it, how to prepare it.",
                                                    usage: "sustainu tips [TYPE] [--json]")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "One trash type, e.g. \"Glass Bottle\" or glass-bottle (default: all).") var type: String?
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try usageCheck { _ = try wanted() }
    }

    /// The trash type asked for, nil for all.
    func wanted() throws -> TrashType? {
        try type.map { type in
            guard let wanted = TrashType.allCases.first(where: { Self.key($0.rawValue) == Self.key(type) }) else {
                throw RecyclingError.unknownTrashType(type)
            }
            return wanted
        }
    }

    func run() async throws {
        let recycling = try await global.open()
        let cached = try await recycling.tips()
        var tips = cached.value
        if let wanted = try wanted() { tips = tips.filter { $0.trashType == wanted.rawValue } }
        if output.json {
            struct Shape: Encodable {
                let fetchedAt: String, savedCopy: Bool
                let tips: [Tip]
            }
            print(try Terminal.json(Shape(fetchedAt: Timestamp.iso8601(cached.fetchedAt), savedCopy: cached.source == .cache, tips: tips)))
        } else {
            if cached.source == .cache { print(Terminal.paint("Offline: tips saved \(age(cached.fetchedAt))", .yellow)) }
            say(tips.map { "\(Terminal.paint($0.trashType, .bold)) → \($0.binLabel)\n  \($0.what)\n  \($0.prepare)" }.joined(separator: "\n\n"))
        }
        if let tip = tips.first, type != nil {
            await recycling.tipOpened(tip.trashType)
            if Terminal.stdinIsTTY && Terminal.stdoutIsTTY && !output.json {
                // NB: how long a tip holds attention is one of the product team's questions; on a
                // terminal the reading ends when the person says so.
                let opened = ContinuousClock.now
                FileHandle.standardError.write(Data("(Enter when done)".utf8))
                _ = readLine()
                await recycling.tipClosed(tip.trashType, readFor: ContinuousClock.now - opened)
            }
        }
        await announceClassified(recycling, json: output.json)
    }

    static func key(_ text: String) -> String {
        text.lowercased().filter { $0.isLetter }
    }
}

struct Reminders: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The notification due now (or at --now): 10:00 \"Time to recycle!\", 20:00 a streak about to break.",
        usage: "sustainu reminders [--now HH:MM|YYYY-MM-DDTHH:MM] [--open] [--json]")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The moment to ask about: HH:MM today, or YYYY-MM-DDTHH:MM (local time).") var now: String?
    @Flag(help: "Open the notification (as tapping it would): says what to do next.") var open = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try usageCheck { _ = try moment(timeZone: .current) }
    }

    func moment(timeZone: TimeZone) throws -> Date {
        guard let now else { return Date() }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = now.split(separator: "T", omittingEmptySubsequences: false)
        let timeText = parts.count == 2 ? parts[1] : parts[0]
        let clock = timeText.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count <= 2, clock.count == 2, let hour = clock[0], let minute = clock[1], (0...23).contains(hour), (0...59).contains(minute) else {
            throw RecyclingError.invalidTime(now)
        }
        var day = calendar.dateComponents([.year, .month, .day], from: Date())
        if parts.count == 2 {
            let date = parts[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard date.count == 3, let y = date[0], let m = date[1], let d = date[2], (1...12).contains(m), (1...31).contains(d), (1970...9999).contains(y) else {
                throw RecyclingError.invalidTime(now)
            }
            day = DateComponents(year: y, month: m, day: d)
        }
        day.hour = hour
        day.minute = minute
        guard let date = calendar.date(from: day), calendar.component(.day, from: date) == day.day else { throw RecyclingError.invalidTime(now) }
        return date
    }

    func run() async throws {
        let recycling = try await global.open(network: false)
        let reminder = try recycling.reminder(at: try moment(timeZone: recycling.configurationTimeZone))
        if let reminder {
            await recycling.reminderShown(reminder)
            if open { await recycling.reminderOpened(reminder) }
        }
        if output.json {
            print(try Terminal.json(reminder.map { [$0] } ?? []))
        } else {
            guard let reminder else {
                say("No reminder is due now. They come at 10:00, and at 20:00 when a streak is about to break.")
                return
            }
            // NB: a phone shows the title above the body; on one line they need a stop between.
            let stop = reminder.title.last.map { ".!?".contains($0) } == true ? " " : ". "
            say(reminder.title + stop + reminder.body)
            // NB: the reminder's text is what a phone shows; the command says how to act on it here.
            say("To do it now: sustainu scan --image PHOTO, or sustainu scan --barcode CODE")
        }
    }
}

/// Terminal bars: one line per label, scaled to the largest value.
enum BarChart {
    static func render(_ rows: [(label: String, value: Int)], width: Int = 30) -> String {
        let top = max(1, rows.map(\.value).max() ?? 1)
        return rows.map { row in
            let length = row.value == 0 ? 0 : max(1, row.value * width / top)
            return "\(row.label) " + Terminal.paint(String(repeating: "█", count: length), .green) + (row.value > 0 ? " \(row.value)" : "")
        }.joined(separator: "\n")
    }
}
