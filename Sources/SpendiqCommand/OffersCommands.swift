import CommandLineSupport
import EventualAPI
import ArgumentParser
import Foundation
import Spending

struct Offers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Offers of shops near you: list (the default), or show one (counts a view).",
        subcommands: [OffersList.self, OffersShow.self], defaultSubcommand: OffersList.self)
    @OptionGroup var global: GlobalOptions
}

struct OffersList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Offers within --radius metres of your last position (spendiq locate) or --near; featured first, then nearest.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Option(help: "LATITUDE,LONGITUDE (default: your last position).") var near: String?
    @Option(parsing: .unconditional, help: "Metres, 1 to 20000.") var radius = 1000
    // NB: ArgumentParser adds "(default: 200)" itself.
    @Option(parsing: .unconditional, help: "The most offers to show, 1 to 1000.") var limit = OffersFeed.defaultLimit

    func validate() throws {
        try usageCheck {
            guard (1...20_000).contains(radius) else { throw CLIError("--radius must be from 1 to 20000 metres") }
            guard (1...1000).contains(limit) else { throw CLIError("--limit must be from 1 to 1000 offers") }
        }
    }

    func run() async throws {
        let given = try near.map { text throws(SpendingError) in try GeoPosition(parsing: text, orThrow: SpendingError.invalidCoordinates) }
        let spending = try await global.spending()
        guard let position = try given ?? spending.location.last()?.position else { throw SpendingError.noPosition }
        let result = try await spending.openOffers(near: position, radius: radius, limit: limit)
        if output.json {
            struct Item: Encodable {
                let id, name, title: String; let distanceMeters: Int; let featured, demo: Bool; let category, recommendationReason: String
            }
            struct Shape: Encodable {
                let savedCopy: Bool; let fetchedAt: String; let note: String?; let total: Int; let offers: [Item]

                enum CodingKeys: String, CodingKey { case savedCopy, fetchedAt, note, total, offers }

                // NB: every key always present (null when empty).
                func encode(to encoder: any Encoder) throws {
                    var container = encoder.container(keyedBy: CodingKeys.self)
                    try container.encode(savedCopy, forKey: .savedCopy)
                    try container.encode(fetchedAt, forKey: .fetchedAt)
                    try container.encode(note, forKey: .note)
                    try container.encode(total, forKey: .total)
                    try container.encode(offers, forKey: .offers)
                }
            }
            print(try Terminal.json(Shape(savedCopy: result.stale, fetchedAt: Timestamp.iso8601(result.fetchedAt), note: result.note, total: result.total, offers: result.offers.map {
                Item(id: $0.id, name: $0.name, title: $0.title, distanceMeters: $0.distanceMeters, featured: $0.featured, demo: $0.demo,
                     category: $0.category, recommendationReason: $0.recommendationReason)
            })))
            return
        }
        if let note = result.note { print(Terminal.paint(Terminal.wrap(note), .yellow)) }
        guard !result.offers.isEmpty else { Terminal.say("No offers within \(radius) m."); return }
        // NB: why an offer is suggested is a sentence: `offers show` says it in full, where a
        // fifth column in 80 characters would cut it to "You …".
        var table = Table("ID", "SHOP", "DISTANCE", "OFFER")
        table.whole = ["ID", "DISTANCE"]
        table.cutFirst = ["SHOP"]
        for offer in result.offers {
            table.add(String(offer.id.suffix(8)), (offer.featured ? "★ " : "") + offer.name, "\(offer.distanceMeters) m",
                      offer.title + (offer.demo ? " (demo)" : ""))
        }
        print(table.render())
        if result.total > result.offers.count {
            let more = result.total <= 1000 ? "--limit \(result.total) shows them all" : "--limit 1000 shows more"
            Terminal.say("The \(result.offers.count) nearest of \(result.total) offers within \(radius) m (featured first): \(more), a smaller --radius fewer.")
        }
        Terminal.say("Why one is suggested: spendiq offers show ID")
    }
}

struct OffersShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "One offer of the last list, in full; the view is counted (queued offline).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The offer's id, as listed (its last 8 characters are enough).") var id: String

    func run() async throws {
        let spending = try await global.spending()
        // NB: "the last list" is the one shown last, wherever it was asked about (--near too).
        let result: OffersResult
        if let shown = try spending.offers.lastList() {
            result = shown
        } else {
            guard let position = try spending.location.last()?.position ?? nil else { throw SpendingError.noPosition }
            result = try await spending.offers.offers(near: position, radius: 20_000)
        }
        let matches = result.offers.filter { $0.id == id || (id.count >= Ledger.shownIDLength && $0.id.hasSuffix(id)) }
        guard matches.count == 1, let offer = matches.first else {
            if matches.isEmpty, id.count < Ledger.shownIDLength { throw SpendingError.idTooShort(id) }
            throw CLIError(matches.isEmpty ? "No offer \(id) in the last list: see spendiq offers" : "\(id) matches \(matches.count) offers: give more of the id")
        }
        Terminal.say("\(offer.name) (\(offer.shopType), \(offer.distanceMeters) m)")
        Terminal.say(offer.title + (offer.demo ? " (demo)" : ""))
        Terminal.say("Why: \(offer.recommendationReason)")
        Terminal.say("At: \(offer.latitude),\(offer.longitude)")
        try await spending.viewOffer(offer.id, shop: offer.name)
        await finish(spending)
    }
}

struct LimitsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "limits", abstract: "Budgets checked at each write: list (the default), set, remove.",
        subcommands: [LimitsList.self, LimitsSet.self, LimitsRemove.self], defaultSubcommand: LimitsList.self)
    @OptionGroup var global: GlobalOptions
}

/// `--daily`, `--weekly` or `--monthly`, exactly one.
struct PeriodOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "A budget per day.") var daily: String?
    @Option(parsing: .unconditional, help: "A budget per week (from Monday).") var weekly: String?
    @Option(parsing: .unconditional, help: "A budget per calendar month.") var monthly: String?

    var chosen: (LimitPeriod, String)? {
        let given = [(LimitPeriod.daily, daily), (.weekly, weekly), (.monthly, monthly)].compactMap { period, amount in amount.map { (period, $0) } }
        return given.count == 1 ? given[0] : nil
    }
}

struct LimitsSet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set", abstract: "Set a budget: spendiq limits set --weekly 120 --category food.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var period: PeriodOptions
    @Option(help: "Only this category (default: all spending).") var category: String?
    @Option(help: "ISO 4217 code (default: the one your accounts hold, when they hold one).") var currency: String?

    func validate() throws {
        try usageCheck { if period.chosen == nil { throw CLIError("Give exactly one of --daily, --weekly or --monthly with an amount") } }
    }

    func run() async throws {
        let spending = try await global.spending()
        guard let (chosen, amount) = period.chosen else { return }
        let code = try currency ?? budgetCurrency(spending)
        let limit = try await spending.limits.set(chosen, amount: amount, currency: code, category: category)
        Terminal.say("Your \(limit.period.rawValue) \(limit.category.isEmpty ? "" : limit.category + " ")limit is \(Money(minorUnits: limit.amountMinor, currency: limit.currency)).")
        // NB: sent now, as every other write is: the person's other devices check it too.
        await finish(spending)
    }
}

struct LimitsRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a budget.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "daily, weekly or monthly.") var period: LimitPeriod
    @Option(help: "Its category (default: the one limit of that period, or the one on all spending).") var category: String?
    @Option(help: "ISO 4217 code (default: the one your accounts hold, when they hold one).") var currency: String?

    func run() async throws {
        let spending = try await global.spending()
        let code = try (currency ?? budgetCurrency(spending)).uppercased()
        let limit = try Self.pick(period, category: category, among: try spending.limits.all().filter { $0.currency == code }, currency: code)
        guard try await spending.limits.remove(period, currency: code, category: limit.category) else {
            throw CLIError("No \(period.rawValue) limit \(Self.on(limit.category)) in \(code): see spendiq limits")
        }
        print("Removed the \(period.rawValue) limit \(Self.on(limit.category)) (\(Money(minorUnits: limit.amountMinor, currency: limit.currency))).")
        await finish(spending)
    }

    /// The limit `category` names among `limits` of `period`; with no category, the one on all
    /// spending, else the only one of the period; several are named, never guessed among.
    static func pick(_ period: LimitPeriod, category: String?, among limits: [SpendingLimit], currency: String) throws -> SpendingLimit {
        let ofPeriod = limits.filter { $0.period == period }
        let wanted = category.map { Categories.normalized($0) ?? "" }
        if let wanted, let limit = ofPeriod.first(where: { $0.category == wanted }) { return limit }
        if wanted == nil, let limit = ofPeriod.first(where: { $0.category.isEmpty }) ?? (ofPeriod.count == 1 ? ofPeriod.first : nil) { return limit }
        guard wanted == nil, !ofPeriod.isEmpty else {
            let there = ofPeriod.isEmpty ? "there is none" : "there is one " + ofPeriod.map { on($0.category) }.joined(separator: ", one ")
            throw CLIError("No \(period.rawValue) limit \(on(wanted ?? "")) in \(currency) (\(there)): see spendiq limits")
        }
        throw CLIError("There are \(ofPeriod.count) \(period.rawValue) limits in \(currency): say which with "
                       + ofPeriod.map { "--category \($0.category)" }.joined(separator: " or "))
    }

    /// "on food", "on all spending".
    static func on(_ category: String) -> String { category.isEmpty ? "on all spending" : "on \(category)" }
}

/// The currency of a budget given none: the one the person's accounts hold, never a guess among several.
private func budgetCurrency(_ spending: UserSpending) throws -> String {
    let codes = Set(try spending.ledger.accounts().map(\.currency)).sorted()
    guard codes.count == 1 else {
        throw ValidationError(codes.isEmpty ? "No account yet to take the currency from: give --currency EUR"
                              : "Your accounts hold \(codes.joined(separator: " and ")): say which with --currency \(codes[0])")
    }
    return codes[0]
}

struct LimitsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Your budgets.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let limits = try await global.spending().limits.all()
        if output.json {
            struct Shape: Encodable { let period, currency: String; @JSONNullable var category: String?; let amountMinor: Int64 }
            print(try Terminal.json(limits.map { Shape(period: $0.period.rawValue, currency: $0.currency,
                                                       category: $0.category.isEmpty ? nil : $0.category, amountMinor: $0.amountMinor) }))
            return
        }
        guard !limits.isEmpty else { Terminal.say("No limits: spendiq limits set --weekly 120 --category food"); return }
        var table = Table("PERIOD", "CATEGORY", "LIMIT")
        table.whole = ["PERIOD", "LIMIT"]
        table.cutFirst = ["CATEGORY"]
        for limit in limits {
            table.add(limit.period.rawValue, limit.category.isEmpty ? "all" : limit.category, Money(minorUnits: limit.amountMinor, currency: limit.currency).description)
        }
        print(table.render())
    }
}
