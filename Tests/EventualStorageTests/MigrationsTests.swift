import Testing
import EventualStorage

@Suite("Migrations: append only, shipped ones frozen")
struct MigrationsTests {
    /// A fingerprint of each shipped migration's SQL, byte for byte. NB: a database migrated by an
    /// earlier version never runs a migration again, so an edited one would leave two kinds of
    /// databases behind: a new schema change is a new migration, and its fingerprint is added here.
    private static let shipped: [Int: UInt64] = [
        1: 0xc468683e02a317fa, // accounts and knowledge base
        2: 0x94cfa01593ba851e, // sync records
        3: 0x0beca5475c8f5193, // throttles and purges
        4: 0x56cdf0a8b9c86b37, // sync counters
        5: 0x9e7b2299877f9e07, // roles
        6: 0x32cebe71da484d4b, // recycling
        7: 0xffd22da3041536c7, // spending
        8: 0x0fd77bf80035c5df, // analytics
        9: 0x88e6598868581b97, // storage usage
        10: 0x75b93d8648293a4c, // usage limits and packaging sources
        11: 0x72e8a6541e335ce8, // spaces
        12: 0xba1b989090ffe43d, // deleted records and their purge
        13: 0xf60a4a8f091c3223, // attachments
        14: 0xda7e4c1196b7ddf9, // who begins an upload
        15: 0x735099079a30795e, // a space belongs to one app
        16: 0xdf2f0d0b1621ea5c, // a history of commits
        17: 0xcc8b00d01864cde2, // deployed apps
    ]

    @Test func versionsCountUpFromOneWithoutGaps() {
        #expect(Migration.all.map(\.version) == Array(1...Migration.all.count))
    }

    @Test func shippedMigrationsKeepTheirSQLByteForByte() {
        for migration in Migration.all {
            guard let fingerprint = Self.shipped[migration.version] else {
                Issue.record("migration \(migration.version) has no fingerprint: add it once it ships")
                continue
            }
            #expect(Self.fingerprint(migration) == fingerprint, "migration \(migration.version) (\(migration.name)) was edited")
        }
    }

    /// FNV-1a (64 bits) of the statements joined by NULs.
    private static func fingerprint(_ migration: Migration) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in migration.statements.joined(separator: "\u{0}").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
