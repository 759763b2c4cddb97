import CommandLineSupport
import ArgumentParser
import EventualAPI
import Foundation
import Spending

struct DashboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "The last 30 days spent and received, every balance, spending per category, the last 7 days as bars (computed on this device).",
        usage: "spendiq dashboard [--json] [--watch [--every SECONDS]]",
        discussion: "Example: spendiq dashboard --watch")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup var watching: WatchOptions

    func run() async throws {
        let spending = try await global.spending()
        let dashboard = try await spending.openDashboard()
        let json = output.json
        guard watching.watch else {
            // NB: balances add every transaction: while a first sync has still to bring some, they are short.
            let arriving = await spending.device.firstSyncUnderWay()
            if json {
                print(try Terminal.json(IncompleteJSON(dashboard, arriving: arriving)))
                return
            }
            RecordsArriving.say(arriving, command: "spendiq")
            print(Self.render(dashboard))
            return
        }
        try await watching.run(spending.watchDashboard(), json: json, engine: spending.device.engine) { dashboard in
            json ? try Terminal.jsonLine(IncompleteJSON(dashboard, arriving: nil)) : Self.render(dashboard)
        }
    }

    static func render(_ dashboard: Dashboard) -> String {
        var lines = [Terminal.paint("Last 30 days", .bold)]
        if dashboard.last30Days.isEmpty { lines.append("  nothing spent or received") }
        for totals in dashboard.last30Days {
            lines.append("  spent \(Money(minorUnits: totals.spentMinor, currency: totals.currency))   received \(Money(minorUnits: totals.receivedMinor, currency: totals.currency))")
        }
        lines.append(Terminal.paint("Accounts", .bold))
        if dashboard.accounts.isEmpty { lines.append("  none yet: spendiq accounts add NAME --currency EUR") }
        // NB: names give way to the amounts on a narrow terminal.
        let nameRoom = max(8, Terminal.columns - 30)
        let width = min(nameRoom, dashboard.accounts.map { DisplayWidth.of($0.name) }.max() ?? 0)
        for account in dashboard.accounts {
            lines.append("  " + Table.padded(account.name, to: width) + "  "
                         + Money(minorUnits: account.balanceMinor, currency: account.currency).description)
        }
        if !dashboard.categories.isEmpty {
            lines.append(Terminal.paint("Spending per category (30 days)", .bold))
            let width = min(nameRoom, dashboard.categories.map { DisplayWidth.of($0.category) }.max() ?? 0)
            for category in dashboard.categories {
                lines.append("  " + Table.padded(category.category, to: width) + "  "
                             + Money(minorUnits: category.spentMinor, currency: category.currency).description)
            }
        }
        let currencies = Array(Set(dashboard.last7Days.map(\.currency))).sorted()
        for currency in currencies {
            let days = dashboard.last7Days.filter { $0.currency == currency }
            let largest = max(1, days.map(\.spentMinor).max() ?? 1)
            lines.append(Terminal.paint("Last 7 days (\(currency))", .bold))
            for day in days {
                let length = Int((Double(day.spentMinor) / Double(largest) * 30).rounded(.up))
                lines.append("  \(day.day)  " + String(repeating: "█", count: length).padding(toLength: 30, withPad: " ", startingAt: 0)
                             + "  " + Money(minorUnits: day.spentMinor, currency: currency).amountText)
            }
        }
        return lines.joined(separator: "\n")
    }
}

struct Locate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record where you are (kept on this device; sent to the server at most every 5 minutes).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "LATITUDE,LONGITUDE, e.g. 43.7384,7.4246.") var position: String

    func run() async throws {
        let coordinates = try GeoPosition(parsing: position, orThrow: SpendingError.invalidCoordinates)
        let spending = try await global.spending()
        let update = try await spending.location.observe(coordinates, force: true)
        Terminal.say("Position kept: \(coordinates.latitude),\(coordinates.longitude)."
              + (update.queued ? " It goes to the server when it can be reached." : " The server gets it with the next update (at most every 5 minutes)."))
        await finish(spending)
    }
}

struct InsightsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "insights", abstract: "What looks unusual in your spending, explained (kept for offline use).")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let spending = try await global.spending()
        let result = try await spending.openInsights()
        if output.json {
            struct Item: Encodable {
                let kind, message: String; @JSONNullable var transactionId: String?; @JSONNullable var category: String?
                @JSONNullable var at: String?
            }
            // NB: `computedAt` is when the server found them; `fetchedAt` when this device last had them from it.
            struct Shape: Encodable { let savedCopy: Bool; let fetchedAt: String; let computedAt: String; let insights: [Item] }
            print(try Terminal.json(Shape(savedCopy: !result.fresh, fetchedAt: Timestamp.iso8601(result.fetchedAt), computedAt: Timestamp.iso8601(result.computedAt), insights: result.insights.map {
                Item(kind: $0.kind, message: $0.message, transactionId: $0.transactionId, category: $0.category, at: $0.at.map(Timestamp.iso8601))
            })))
            return
        }
        if !result.fresh {
            let age = max(0, UnixMillis.now() - result.computedAt) / 60_000
            print(Terminal.paint(Terminal.wrap("Offline: findings from \(age < 60 ? "\(age) min" : "\(age / 60) h") ago."), .yellow))
        }
        if result.insights.isEmpty { Terminal.say("Nothing unusual.") }
        for insight in result.insights { Terminal.say("• [\(insight.kind)] \(insight.message)") }
    }
}
