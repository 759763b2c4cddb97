import Crypto
import EventualAPI
import Foundation

/// The seeded tips: for each of the 15 trash types, what it is, which bin takes it and how to
/// prepare it. Served with an ETag made from their text, so it changes only when they do.
enum RecyclingTips {
    struct Tip: Sendable {
        let trashType: TrashType
        let what: String
        let prepare: String
    }

    static let all: [Tip] = [
        Tip(trashType: .plasticBottle,
            what: "Drink and detergent bottles, jugs and other rigid plastic containers.",
            prepare: "Empty and rinse it, squash it flat and put the cap back on so it is recycled too."),
        Tip(trashType: .aluminumCan,
            what: "Drink cans, food tins, aluminium trays and clean foil.",
            prepare: "Empty and rinse it; do not crush cans into each other, and scrunch foil into a ball the size of a fist."),
        Tip(trashType: .glassBottle,
            what: "Bottles and jars of clear, green or brown glass.",
            prepare: "Empty and rinse it and take off the lid (metal lids go with cans). No drinking glasses, mirrors or light bulbs."),
        Tip(trashType: .paperWaste,
            what: "Printer paper, notebooks, newspapers, magazines, envelopes and flyers.",
            prepare: "Keep it dry and clean; staples may stay, but greasy or wet paper (napkins, tissues) goes in the yellow bin."),
        Tip(trashType: .cardboardBox,
            what: "Boxes, cartons, packaging board and paper bags.",
            prepare: "Flatten it, remove tape and plastic inserts, and keep it dry. A greasy pizza box goes in the yellow bin."),
        Tip(trashType: .foodScrap,
            what: "Leftovers, fruit and vegetable peels, coffee grounds, tea bags and eggshells.",
            prepare: "Scrape it out of its packaging and keep out plastic, stickers and compostable-looking cups that are not."),
        Tip(trashType: .yardWaste,
            what: "Leaves, grass cuttings, flowers and small branches.",
            prepare: "Shake off soil and stones; cut branches short and leave out anything treated or painted."),
        Tip(trashType: .electronicWaste,
            what: "Phones, chargers, cables, headphones, keyboards and other things with a plug or a circuit.",
            prepare: "Wipe your data, take out removable batteries (they go separately) and bring it to a point that accepts electronics."),
        Tip(trashType: .styrofoam,
            what: "Expanded polystyrene: foam cups, takeaway boxes, trays and packing blocks.",
            prepare: "Empty it of food; it is not recycled on campus, so it goes in the yellow bin. Large clean blocks may go to a recycling centre."),
        Tip(trashType: .battery,
            what: "Single-use and rechargeable batteries, from coin cells to laptop packs.",
            prepare: "Never put them in a bin: tape the terminals of lithium batteries and bring them to a point that accepts batteries."),
        Tip(trashType: .hazardousWaste,
            what: "Chemicals, solvents, cleaning products, pesticides, aerosol cans that are not empty.",
            prepare: "Keep it closed in its original container, never mix products, and bring it to a point that accepts hazardous waste."),
        Tip(trashType: .textileWaste,
            what: "Clothes, shoes, bed linen and other fabric, worn out or not.",
            prepare: "Wash and dry it, tie shoes together in pairs and bag it; bring it to a textile container or recycling point."),
        Tip(trashType: .medicalWaste,
            what: "Medicines, syringes, needles, test kits and bandages.",
            prepare: "Keep medicines in their packs; put sharps in a closed rigid container and bring them to a pharmacy or a hazardous-waste point."),
        Tip(trashType: .oilContainer,
            what: "Used cooking oil and engine oil, and the bottles that held them.",
            prepare: "Let cooking oil cool, pour it into a closed bottle and bring it to a point that accepts oil; never down the drain."),
        Tip(trashType: .paintCan,
            what: "Tins of paint, varnish, lacquer or wood stain.",
            prepare: "Keep the lid on; leftover paint is hazardous, so bring the can to a point that accepts hazardous waste."),
    ]

    /// The tips as the contract describes them.
    static let list: Components.Schemas.TipList = Components.Schemas.TipList(tips: all.map { tip in
        let bin = tip.trashType.bin
        return Components.Schemas.Tip(
            trashType: Components.Schemas.TrashType(rawValue: tip.trashType.rawValue)!,
            what: tip.what, bin: Components.Schemas.BinColour(rawValue: bin.colour)!, binLabel: bin.label, prepare: tip.prepare
        )
    })

    /// A strong ETag of the tips' text.
    static let etag: String = {
        let text = all.map { [$0.trashType.rawValue, $0.what, $0.trashType.bin.label, $0.prepare].joined(separator: "\u{0}") }
            .joined(separator: "\u{1}")
        return "\"tips-" + Hex.encode(SHA256.hash(data: Data(text.utf8))).prefix(16) + "\""
    }()
}
