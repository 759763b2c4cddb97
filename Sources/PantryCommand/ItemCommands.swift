import CommandLineSupport
import ArgumentParser
import EventualKit
import EventualAPI
import Foundation
import Pantry

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Put something without a barcode in the pantry.",
        discussion: "Example: pantry add --name Milk --quantity 2 --expires +5d --household Home")
    @OptionGroup var global: GlobalOptions
    @Option(help: "What it is, e.g. Milk.") var name: String
    @Option(help: "A longer description.") var description: String?
    @OptionGroup var item: ItemOptions
    @OptionGroup var destination: DestinationOptions
    @Option(help: "A photo of it (JPEG, PNG or HEIC, at most 20 MiB; - reads standard input): kept here, uploaded when online.") var photo: String?

    func run() async throws {
        let pantry = try await global.app().open()
        let space = try destination.space(in: pantry)
        let picture = try photo.map { try AttachmentWords.prepare($0, option: "--photo", with: pantry.attachments) }
        let added = try await pantry.items.add(try item.details(name: name, description: description), space: space?.id, photo: picture)
        let report = await pantry.device.sync(.localBudget, pull: false)
        print("Added \(added.name) (\(String(added.id.suffix(8))))\(DestinationOptions.to(space))"
            + (picture.map { " with its photo (\(ByteCount.text($0.size)))" } ?? "") + ".")
        DeliveryNote.sayWaiting(after: report, of: pantry)
    }
}

extension ItemQuery.Sort: ExpressibleByArgument {}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "What is in the pantry, soonest expiry first; marked when a change waits to be sent or was refused.",
        discussion: "Example: pantry list --expiring 3d --watch")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Sort by expiry, name, category or bought.") var sort: ItemQuery.Sort = .expiry
    @Option(parsing: .unconditional, help: "Only what expires within this window: 3d, 2w.") var expiring: String?
    @Flag(help: "Only what has expired.") var expired = false
    @Option(help: "Only this category.") var category: String?
    @Option(name: .customLong("where"), help: "Only things bought at a place containing this text.") var place: String?
    @Flag(help: "What left the pantry instead (consumed or thrown away): `pantry restore ID` brings one back.") var finished = false
    @OptionGroup var output: OutputOptions
    @OptionGroup var watching: WatchOptions

    func validate() throws {
        try usageCheck { _ = try expiring.map { try ExpiryParser().days($0) } }
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let query = ItemQuery(sort: sort, expiringWithinDays: try expiring.map { try ExpiryParser().days($0) },
                              expiredOnly: expired, category: category, placeContains: place, finished: finished)
        let json = output.json
        guard watching.watch else {
            let items = try pantry.items.list(query)
            // NB: what expires is read from every item: while a first sync has still to bring some, the list is short.
            let expiry = query.expiringWithinDays != nil || query.expiredOnly
            let arriving = expiry ? await pantry.device.firstSyncUnderWay() : nil
            if !json { RecordsArriving.say(arriving, command: "pantry") }
            print(try Self.render(items, states: try pantry.items.syncStates(of: items), of: pantry, json: json,
                                  firstSync: expiry ? .some(arriving) : nil))
            return
        }
        try await watching.run(pantry.items.watch(query), json: json, engine: pantry.device.engine) { snapshot in
            let states = Dictionary(snapshot.rows.map { ($0.row.id, $0.state) }, uniquingKeysWith: { first, _ in first })
            return try Self.render(snapshot.rows.map(\.row), states: states, of: pantry, json: json, oneLine: true)
        }
    }

    /// The items as a table with their marks, or as JSON (`oneLine`: one document per line, for `--watch`).
    /// `firstSync`, for an expiry view: the first sync under way (nil once done), said in each row (`incomplete`).
    static func render(_ items: [PantryItem], states: [String: SyncState], of pantry: UserPantry, json: Bool,
                       oneLine: Bool = false, firstSync: PullProgress?? = nil) throws -> String {
        let owners = try ItemPrinting.Owners(pantry)
        if json {
            let rows = items.map { ItemPrinting.JSONItem(item: $0, owners: owners, state: states[$0.id] ?? .confirmed) }
            if let firstSync { return try ItemPrinting.json(rows.map { IncompleteJSON($0, arriving: firstSync, counts: false) }) }
            return oneLine ? try Terminal.jsonLine(rows) : try ItemPrinting.json(rows)
        }
        return items.isEmpty ? "Nothing here." : ItemPrinting.table(items, owners: owners, states: states)
    }
}

struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Full-text search over name, description, category and place.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Words to find; the last may be the start of a word.") var text: [String]
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let pantry = try await global.app().open()
        let items = try pantry.items.search(text.joined(separator: " "))
        let owners = try ItemPrinting.Owners(pantry)
        if output.json {
            print(try ItemPrinting.json(items.map { ItemPrinting.JSONItem(item: $0, owners: owners) }))
        } else if items.isEmpty {
            print("No item matches \"\(text.joined(separator: " "))\".")
        } else {
            print(ItemPrinting.table(items, owners: owners))
        }
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Everything about one item.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The item's id (its last characters are enough).") var id: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let pantry = try await global.app().open()
        let item = try pantry.items.item(id)
        let owners = try ItemPrinting.Owners(pantry)
        let state = try pantry.items.syncStates(of: [item])[item.id] ?? .confirmed
        print(output.json ? try ItemPrinting.json(ItemPrinting.JSONItem(item: item, owners: owners, state: state))
                          : ItemPrinting.details(item, owners: owners, state: state))
    }
}

struct Consume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Use some or all of an item; at zero it leaves the pantry.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The item's id (its last characters are enough).") var id: String
    // NB: `.unconditional` so that `--quantity -1` is refused as a quantity, not read as an option.
    @Option(parsing: .unconditional, help: "How much (default: all of it): from 0.001 to 1000000.") var quantity: String?

    func validate() throws {
        try usageCheck { _ = try quantity.map { try ItemDetails.quantity(typed: $0) } }
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let item = try await pantry.items.consume(id, quantity: try quantity.map { try ItemDetails.quantity(typed: $0) })
        let report = await pantry.device.sync(.localBudget, pull: false)
        print(item.status == .consumed ? "Finished \(item.name)." : "\(item.name): \(ItemPrinting.quantity(item)) left.")
        DeliveryNote.sayWaiting(after: report, of: pantry)
    }
}

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Throw an item away.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The item's id (its last characters are enough).") var id: String

    func run() async throws {
        let pantry = try await global.app().open()
        let item = try await pantry.items.remove(id)
        let report = await pantry.device.sync(.localBudget, pull: false)
        print("Threw away \(item.name).")
        DeliveryNote.sayWaiting(after: report, of: pantry)
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete an item for good, or every item used up or thrown away (--gone), on every device.",
        usage: "pantry delete ID\npantry delete --gone",
        discussion: """
            Unlike remove and consume, nothing of the item is kept: the shopping list forgets it too. It frees its \
            place under a record quota at once.
            Example: pantry delete 1a2b3c4d
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The item's id (its last characters are enough).") var id: String?
    @Flag(help: "Every item used up or thrown away.") var gone = false

    func validate() throws {
        if id == nil, !gone { throw ValidationError("Give an item's ID, or --gone for every item used up or thrown away") }
        if id != nil, gone { throw ValidationError("Give an item's ID or --gone, not both") }
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let said: String
        if let id {
            let item = try pantry.items.item(id)
            // NB: a deletion of an item the server never had would make it a record there, past a quota too.
            if let creation = try pantry.device.failures().first(where: { $0.recordID == item.id && $0.createsRecord }) {
                throw CLIError("The server never had \(item.name) (it refused it): `pantry settle \(creation.shortID) --discard` drops it from this device")
            }
            said = "Deleted \((try await pantry.items.delete(item.id)).name) for good."
        } else {
            // NB: an item whose creation the server refused is settled, not deleted (see above).
            let refused = Set(try pantry.device.failures().filter(\.createsRecord).map(\.recordID))
            let deleted = try await pantry.items.deleteGone(except: refused)
            guard !deleted.isEmpty else { return print("Nothing used up or thrown away to delete.") }
            said = "Deleted for good \(deleted.count == 1 ? "1 item" : "\(deleted.count) items") used up or thrown away."
        }
        let report = await pantry.device.sync(.localBudget, pull: false)
        print(said)
        DeliveryNote.sayWaiting(after: report, of: pantry)
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring an item consumed or thrown away back into the pantry.",
        discussion: "`pantry list --finished` lists them. Example: pantry restore 3f2a91c0 --quantity 2")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The item's id (its last characters are enough).") var id: String
    // NB: `.unconditional` so that `--quantity -1` is refused as a quantity, not read as an option.
    @Option(parsing: .unconditional, help: "How much is there now, from 0.001 to 1000000 (else as it left).") var quantity: String?

    func validate() throws {
        try usageCheck { _ = try quantity.map { try ItemDetails.quantity(typed: $0) } }
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let item = try await pantry.items.restore(id, quantity: try quantity.map { try ItemDetails.quantity(typed: $0) })
        let report = await pantry.device.sync(.localBudget, pull: false)
        print("Brought \(item.name) back into the pantry.")
        DeliveryNote.sayWaiting(after: report, of: pantry)
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change an item's details.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The item's id (its last characters are enough).") var id: String
    @Option(help: "A new name.") var name: String?
    @Option(help: "A new description.") var description: String?
    @Flag(name: .customLong("no-expiry"), help: "Forget the expiry.") var noExpiry = false
    @Option(help: "A new photo of it (JPEG, PNG or HEIC, at most 20 MiB; - reads standard input): kept here, uploaded when online.") var photo: String?
    @OptionGroup var item: ItemOptions

    func validate() throws {
        if noExpiry, item.expires != nil { throw ValidationError("Use --expires or --no-expiry, not both") }
        // NB: as spendiq's edits: "Updated" for an edit that changed nothing would not be true.
        if [name, description, item.quantity, item.unit, item.expires, item.category, item.place, item.at, photo].allSatisfy({ $0 == nil }), !noExpiry {
            throw ValidationError("Nothing to change: give --name, --description, --quantity, --unit, --expires, --no-expiry, --category, --where, --at or --photo")
        }
    }

    func run() async throws {
        let pantry = try await global.app().open()
        // NB: the photo is checked and copied in before anything is written: a refusal changes nothing.
        let picture = try photo.map { try AttachmentWords.prepare($0, option: "--photo", with: pantry.attachments) }
        let edited = try await pantry.items.edit(id, try item.details(name: name, description: description), clearExpiry: noExpiry,
                                                 photo: picture)
        let report = await pantry.device.sync(.localBudget, pull: false)
        print("Updated \(edited.name)" + (picture.map { " with its new photo (\(ByteCount.text($0.size)))" } ?? "") + ".")
        DeliveryNote.sayWaiting(after: report, of: pantry)
    }
}
