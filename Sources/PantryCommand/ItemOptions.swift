import CommandLineSupport
import ArgumentParser
import EventualAPI
import Foundation
import Pantry

/// The details of an item, shared by scan, add and edit.
struct ItemOptions: ParsableArguments {
    // NB: `.unconditional` so that `--quantity -1` is refused as a quantity, not read as an option.
    // NB: text, so that a refusal echoes what was typed ('1e20', not '1e+20').
    @Option(parsing: .unconditional, help: "How many, from 0.001 to 1000000 (a new item: 1 unless given).") var quantity: String?
    @Option(help: "The unit: pcs, g, kg, l, …") var unit: String?
    // NB: `.unconditional` so that `--expires -2d` is refused as an expiry, not as "Missing value".
    @Option(parsing: .unconditional, help: "Expiry: a date like 2026-12-24, today, tomorrow, or +5d, +2w, +1m.") var expires: String?
    @Option(help: "A category, e.g. dairy.") var category: String?
    @Option(name: .customLong("where"), help: "Where it was bought, e.g. \"Coop, Via Roma 1\".") var place: String?
    @Option(help: "Where it was bought as LATITUDE,LONGITUDE, e.g. 44.4949,11.3426.") var at: String?

    func validate() throws {
        try usageCheck {
            _ = try quantity.map { try ItemDetails.quantity(typed: $0) }
            _ = try expires.map { try ExpiryParser().expiry($0) }
            _ = try at.map { try GeoPosition(parsing: $0, orThrow: PantryError.invalidCoordinates) }
        }
    }

    func details(name: String? = nil, description: String? = nil) throws -> ItemDetails {
        ItemDetails(
            name: name, description: description, quantity: try quantity.map { try ItemDetails.quantity(typed: $0) }, unit: unit, category: category,
            expiresOn: try expires.map { try ExpiryParser().expiry($0) }, place: place,
            position: try at.map { try GeoPosition(parsing: $0, orThrow: PantryError.invalidCoordinates) }
        )
    }
}
