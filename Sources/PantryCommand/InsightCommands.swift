import CommandLineSupport
import ArgumentParser
import Foundation
import Pantry

struct RemindersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reminders", abstract: "What today's notification would say.")
    @OptionGroup var global: GlobalOptions
    @Option(parsing: .unconditional, help: "The window for \"expiring soon\", in days (0 to 36500).") var days = 3
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (0...36_500).contains(days) else { throw ValidationError("--days \(days) is out of range: use 0 to 36500 days") }
    }

    func run() async throws {
        let pantry = try await global.app().open()
        let reminders = try pantry.reminders(days: days)
        let owners = try ItemPrinting.Owners(pantry)
        // NB: what expires and what ran out are read from every item: while a first sync has still to bring some, they are short.
        let arriving = await pantry.device.firstSyncUnderWay()
        let json = { (item: PantryItem) in ItemPrinting.JSONItem(item: item, owners: owners) }
        if output.json {
            struct Shape: Encodable {
                let expired: [ItemPrinting.JSONItem]
                let expiringSoon: [ItemPrinting.JSONItem]
                let shoppingList: [ItemPrinting.JSONRanOut]
                let forgotten: [ItemPrinting.JSONItem]
            }
            print(try ItemPrinting.json(IncompleteJSON(Shape(expired: reminders.expired.map(json),
                                                             expiringSoon: reminders.expiringSoon.map(json),
                                                             shoppingList: reminders.shoppingList.map(ItemPrinting.JSONRanOut.init),
                                                             forgotten: reminders.forgotten.map(json)), arriving: arriving)))
            return
        }
        RecordsArriving.say(arriving, command: "pantry")
        guard !reminders.isEmpty else { print("Nothing to remind you of."); return }
        var sections: [String] = []
        if !reminders.expired.isEmpty {
            sections.append(Terminal.paint("Expired", .red) + "\n" + ItemPrinting.table(reminders.expired, owners: owners))
        }
        if !reminders.expiringSoon.isEmpty {
            sections.append(Terminal.paint("Expiring within \(days) days", .yellow) + "\n" + ItemPrinting.table(reminders.expiringSoon, owners: owners))
        }
        if !reminders.shoppingList.isEmpty {
            var table = Table("PRODUCT", "BOUGHT", "RAN OUT")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for line in reminders.shoppingList {
                table.add(.init(line.name), .init(line.timesBought == 1 ? "once" : "\(line.timesBought) times"), .init(RelativeDay.ago(line.ranOutAt, now: now)))
            }
            sections.append(Terminal.paint("Shopping list", .green) + "\n" + table.render())
        }
        if !reminders.forgotten.isEmpty {
            sections.append(Terminal.paint("Forgotten? (untouched for 60 days)", .dim) + "\n" + ItemPrinting.table(reminders.forgotten, owners: owners))
        }
        print(sections.joined(separator: "\n\n"))
    }
}

struct Places: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Where things were bought, with counts.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Write a GeoJSON FeatureCollection of the places with a position to this file (- for stdout).")
    var geojson: String?
    @Flag(help: "With --geojson: write over the file if it exists.") var force = false
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let pantry = try await global.app().open()
        let places = try pantry.places()
        // NB: a place's count adds its items: while a first sync has still to bring some, it is short.
        let arriving = await pantry.device.firstSyncUnderWay()
        if let geojson {
            let data = try Place.geoJSON(places)
            let unplaced = places.filter { $0.latitude == nil || $0.longitude == nil }.count
            // NB: said on stderr, so that the GeoJSON on stdout stays valid for a pipe.
            let note = unplaced > 0 ? "\(unplaced) place(s) had no position and are not in the GeoJSON: add one with --at LATITUDE,LONGITUDE." : nil
            if geojson == "-" {
                print(String(decoding: data, as: UTF8.self))
                if let note { Terminal.error(note) }
            } else {
                try Self.write(data, to: geojson, force: force)
                print("Wrote \(places.count - unplaced) place(s) to \(geojson).")
                if let note { Terminal.error(note) }
            }
            return
        }
        if output.json {
            print(try ItemPrinting.json(places.map { IncompleteJSON(ItemPrinting.JSONPlace($0), arriving: arriving, counts: false) }))
            return
        }
        RecordsArriving.say(arriving, command: "pantry")
        if places.isEmpty {
            print("No places yet: add one with --where when you scan or add.")
        } else {
            var table = Table("PLACE", "ITEMS", "POSITION")
            for place in places {
                let position = place.latitude.flatMap { latitude in place.longitude.map { "\(latitude),\($0)" } } ?? "-"
                table.add(.init(place.name), .init("\(place.count)"), .init(position))
            }
            print(table.render())
        }
    }

    /// Writes a new file, or over a regular one with `force` (through a symlink, never replacing it);
    /// never over a device, a folder or anything else that is not a regular file.
    static func write(_ data: Data, to path: String, force: Bool) throws {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        if let type = try? FileManager.default.attributesOfItem(atPath: target.path)[.type] as? FileAttributeType {
            guard type == .typeRegular else { throw CLIError("\(path) is not a regular file: give a new file's path, or - for standard output") }
            guard force else { throw CLIError("\(path) exists: add --force to write over it") }
        }
        // NB: not atomic: an atomic write would replace a symlink with a file instead of writing where it points.
        try data.write(to: target)
    }
}
