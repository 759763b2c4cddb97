@testable import EventualAPI
import Foundation
import Testing

/// Issue 47, first step: an app is a declaration file, read the same way by every part, and every
/// mistake in one is said at once with its line and its place, never at the first push.
@Suite("An app's declaration file")
struct AppDeclarationTests {
    /// The mistakes of `text`, as "LINE PLACE MESSAGE" lines; empty when it reads.
    private func mistakes(_ text: String, owners: [String: String] = ["pantry_items": "pantry"]) -> [String] {
        switch AppDeclaration.read(text, owners: owners) {
        case .success: return []
        case .failure(let problems): return problems.problems.map { "\($0.line.map(String.init) ?? "-") \($0.place) \($0.message)" }
        }
    }

    @Test(arguments: EventualApp.builtIn.map(\.id.rawValue))
    func everyBuiltInAppReadsBackFromItsFileAsTheSameApp(_ id: String) throws {
        let app = try #require(EventualApp.builtIn.first { $0.id.rawValue == id })
        let text = AppDeclaration.yaml(of: app)
        let read = try AppDeclaration.read(text, owners: [:]).get()
        #expect(read.app == app, "\(text)")
    }

    /// The bundled files are what the server and the engine use: each reads, owns collections no
    /// other app declares, and is the app `EventualApp.builtIn` lists.
    @Test(arguments: ["pantry", "spendiq", "sustainu"])
    func eachBuiltInAppIsItsBundledFile(_ id: String) throws {
        let declared = BuiltInApps.declared(id)
        #expect(EventualApp.named(declared.id) == declared)
        let others = EventualApp.builtIn.filter { $0.id != declared.id }.flatMap(\.collections).map(\.name)
        #expect(Set(declared.collections.map(\.name)).isDisjoint(with: others))
    }

    @Test func aGoodDeclarationReadsWithItsDefaults() throws {
        let app = try AppDeclaration.read("""
            id: shelf
            title: Shelf
            collections:
              - name: shelf_books
                scope: space
                fields:
                  title: { type: string, nullable: false, maxLength: 200 }
                  copies: { type: counter }
                  state: { type: string }
                rules:
                  - notBelow: { field: copies, minimum: 0 }
                  - oneOf: { field: state, allowed: [shelved, lent] }
            """).get().app
        let books = try #require(app.collections.first)
        #expect(app.id.rawValue == "shelf" && !app.needsVerifiedEmail && books.scope == .space && !books.deletionIsFinal)
        #expect(books.fields["copies"] == SyncField(.counter) && books.fields["title"] == SyncField(.string, nullable: false, maxLength: 200))
        #expect(books.rules == [.notBelow("copies", 0), .oneOf("state", ["shelved", "lent"])])
        // And JSON is YAML too
        let json = #"{"id": "shelf", "title": "Shelf", "collections": [{"name": "shelf_books", "fields": {"title": {"type": "string"}}}]}"#
        #expect(try AppDeclaration.read(json).get().app.collections.first?.scope == .person)
    }

    @Test func everyMistakeIsSaidAtOnceWithItsLineAndPlace() {
        let said = mistakes("""
            id: shelf
            title: Shelf
            colour: blue
            collections:
              - name: shelf_books
                fields:
                  title: { type: text }
                  id: { type: string }
                  space_id: { type: string }
                  Changed_By: { type: string }
                  eventual_seq: { type: integer }
                  size: { type: integer, maxLength: 4 }
                  note: { type: string, maxLength: 0 }
                rules:
                  - atMost: { field: size, maximum: 3 }
                  - notBelow: { field: note, minimum: 0 }
                  - oneOf: { field: colour, allowed: [red] }
                  - refersTo: { field: note, collection: shelf_lenders }
              - name: pantry_items
                fields:
                  name: { type: string }
            """)
        let expected = [
            "3 the declaration.colour is not a key of a declaration: use collections, id, minimumVersion, title, verifiedEmail, verifyCommand, version",
            "7 collections[0].fields.title.type 'text' is not a type: use string, integer, number, boolean, date, counter",
            "8 collections[0].fields.id is named like a column the engine keeps itself: choose another name",
            "9 collections[0].fields.space_id is named like a column the engine keeps itself: choose another name",
            "10 collections[0].fields.Changed_By is named like a column the engine keeps itself: choose another name",
            "11 collections[0].fields.eventual_seq is named like a column the engine keeps itself: choose another name",
            "12 collections[0].fields.size.maxLength applies to a string only",
            "13 collections[0].fields.note.maxLength must be a whole number from 1 to 1000000",
            "15 collections[0].rules[0].atMost is not a key of a rule: use editableWhile, notBelow, oneOf, refersTo",
            "16 collections[0].rules[1].notBelow.field 'note' is a string: notBelow takes a number",
            "17 collections[0].rules[2].oneOf.field 'colour' is not a field of this collection",
            "18 collections[0].rules[3].refersTo.collection 'shelf_lenders' is not a collection of this app",
            "19 collections[1].name 'pantry_items' is a collection of the app pantry: choose another name",
        ]
        #expect(said == expected, "\(said.joined(separator: "\n"))")
    }

    @Test(arguments: [
        ("id: Shelf-App\ntitle: Shelf\n", "1 id 'Shelf-App' is not an app id"),
        ("id: étagère\ntitle: Shelf\n", "1 id 'étagère' is not an app id"),
        ("id: shelf\ntitle: \"\\u0007 bell\"\n", "2 title holds a control character"),
        ("id: shelf\ntitle: \"   \"\n", "2 title must be 1 to 60 characters"),
        ("id: shelf\n", "- title is missing"),
        ("- id: shelf\n", "1 the declaration must be a mapping of keys to values"),
        ("id: shelf\ntitle: Shelf\nid: other\n", "gives 'id' twice: give each key once"),
        ("id: shelf\ntitle: Shelf\ncollections:\n  - name: books\n    fields:\n      a: { type: string }\n      a: { type: integer }\n",
         "gives 'a' twice: give each key once"),
        ("id: shelf\ntitle: [Shelf\n", "is not YAML"),
        ("", "1 the file is empty"),
        ("id: shelf\ntitle: Shelf\u{0}\n", "2 the file holds a NUL byte"),
        ("id: shelf\ntitle: Shelf\ncollections:\n  - name: Books!\n    fields: { a: { type: string } }\n", "4 collections[0].name 'Books!' is not a collection name"),
        ("id: shelf\ntitle: Shelf\ncollections:\n  - name: books\n    fields: {}\n", "5 collections[0].fields declares none"),
        ("id: shelf\ntitle: Shelf\ncollections:\n  - name: books\n", "4 collections[0].fields is missing"),
        ("id: shelf\ntitle: Shelf\ncollections:\n  - name: books\n    scope: everywhere\n    fields: { a: { type: string } }\n",
         "5 collections[0].scope must be person or space"),
    ])
    func aMalformedPartIsNamed(_ text: String, _ expected: String) {
        let said = mistakes(text)
        #expect(said.contains { $0.hasPrefix(expected) || $0.contains(expected) }, "\(said)")
    }

    @Test func absurdSizesAreRefusedNotRead() {
        // 10,000 fields in one collection
        let fields = (0..<10_000).map { "      f\($0): { type: string }" }.joined(separator: "\n")
        let many = mistakes("id: shelf\ntitle: Shelf\ncollections:\n  - name: books\n    fields:\n\(fields)\n")
        #expect(many.count == 1 && many[0].contains("declares 10000: a collection has at most 256"), "\(many.prefix(3))")
        // A 10 MB file
        let huge = mistakes("id: shelf\ntitle: Shelf\n# " + String(repeating: "x", count: 10 * 1024 * 1024) + "\n")
        #expect(huge == ["- the file is 10240 KiB: a declaration is at most 1024 KiB"], "\(huge)")
        // 100 collections
        let collections = (0..<100).map { "  - name: c\($0)\n    fields: { a: { type: string } }" }.joined(separator: "\n")
        let lots = mistakes("id: shelf\ntitle: Shelf\ncollections:\n\(collections)\n")
        #expect(lots.count == 1 && lots[0].contains("lists 100: an app has at most 64"), "\(lots.prefix(3))")
    }

    // MARK: - A new version only adds

    private static let shelf = """
        id: shelf
        title: Shelf
        collections:
          - name: shelf_books
            scope: space
            fields:
              title: { type: string, nullable: false, maxLength: 200 }
              note: { type: string, maxLength: 50 }
              copies: { type: counter }
              state: { type: string }
            rules:
              - notBelow: { field: copies, minimum: 0 }
              - oneOf: { field: state, allowed: [shelved, lent] }
        """

    private func redeploy(_ edit: (String) -> String) throws -> [String] {
        let old = try AppDeclaration.read(Self.shelf).get().app
        let new = try AppDeclaration.read(edit(Self.shelf)).get().app
        return AppRedeploy.problems(from: old, to: new).map { "\($0.place) \($0.message)" }
    }

    @Test func aRedeployMayAddAndLoosen() throws {
        #expect(try redeploy { $0 } == [])
        let looser = try redeploy { text in
            text.replacingOccurrences(of: "title: Shelf", with: "title: Our shelf")
                .replacingOccurrences(of: "maxLength: 50", with: "maxLength: 500")
                .replacingOccurrences(of: "title: { type: string, nullable: false, maxLength: 200 }", with: "title: { type: string, maxLength: 200 }")
                .replacingOccurrences(of: "allowed: [shelved, lent]", with: "allowed: [shelved, lent, lost]")
                .replacingOccurrences(of: "minimum: 0", with: "minimum: -5")
                .replacingOccurrences(of: "      state: { type: string }", with: "      state: { type: string }\n      isbn: { type: string }")
                + "\n  - name: shelf_loans\n    fields:\n      who: { type: string, nullable: false }\n"
        }
        #expect(looser == [], "a new title, a longer length, nullable, more allowed, a lower minimum, a nullable field, a collection")
        #expect(try redeploy { $0.replacingOccurrences(of: "      - notBelow: { field: copies, minimum: 0 }\n", with: "") } == [], "a rule removed loosens")
    }

    @Test func aRedeployThatNarrowsIsRefusedNamingEachStep() throws {
        let said = try redeploy { text in
            text.replacingOccurrences(of: "maxLength: 200", with: "maxLength: 20")
                .replacingOccurrences(of: "note: { type: string, maxLength: 50 }", with: "note: { type: integer }")
                .replacingOccurrences(of: "state: { type: string }", with: "state: { type: string, nullable: false }\n      owner: { type: string, nullable: false }")
                .replacingOccurrences(of: "allowed: [shelved, lent]", with: "allowed: [shelved]")
                .replacingOccurrences(of: "minimum: 0", with: "minimum: 1")
                .replacingOccurrences(of: "scope: space", with: "scope: person")
                .replacingOccurrences(of: "      copies: { type: counter }\n", with: "")
                .replacingOccurrences(of: "      - notBelow: { field: copies, minimum: 1 }\n", with: "")
        }
        let expected = [
            "collection shelf_books.scope changes from space to person",
            "collection shelf_books.fields.copies is gone",
            "collection shelf_books.fields.note.type changes from string to integer",
            "collection shelf_books.fields.state.nullable becomes false",
            "collection shelf_books.fields.title.maxLength shrinks from 200 to 20",
            "collection shelf_books.fields.owner is new and not nullable",
            "collection shelf_books.rules[0] is a new or tighter rule (state)",
        ]
        #expect(said.count == expected.count, "\(said)")
        for (line, start) in zip(said, expected) { #expect(line.hasPrefix(start), "\(line)") }
        // And a collection gone, a length where there was none, a rule added
        let gone = try AppRedeploy.problems(from: AppDeclaration.read(Self.shelf).get().app,
                                            to: AppDeclaration.read("id: shelf\ntitle: Shelf\n").get().app)
        #expect(gone.map(\.place) == ["collection shelf_books"])
        let bounded = try redeploy { $0.replacingOccurrences(of: "state: { type: string }", with: "state: { type: string, maxLength: 9 }") }
        #expect(bounded.count == 1 && bounded[0].hasPrefix("collection shelf_books.fields.state.maxLength becomes 9"), "\(bounded)")
        let rule = try redeploy { $0 + "\n      - oneOf: { field: note, allowed: [a] }" }
        #expect(rule.count == 1 && rule[0].hasPrefix("collection shelf_books.rules[2] is a new or tighter rule (note)"), "\(rule)")
    }

    // MARK: - Versions and defaults

    @Test(arguments: [
        ("version: 0", "version must be a whole number from 1 to 1000000"),
        ("version: -2", "version must be a whole number from 1 to 1000000"),
        ("version: 1000001", "version must be a whole number from 1 to 1000000"),
        ("version: two", "version must be a whole number from 1 to 1000000"),
        ("version: true", "version must be a whole number from 1 to 1000000"),
        ("version: 2.5", "version must be a whole number from 1 to 1000000"),
        ("version: [2]", "version must be a whole number from 1 to 1000000"),
    ])
    func aVersionIsAWholeNumberInItsRange(_ line: String, _ said: String) throws {
        let text = "id: shelf\ntitle: Shelf\n\(line)\n"
        guard case .failure(let problems) = AppDeclaration.read(text) else {
            Issue.record("\(line) is refused")
            return
        }
        #expect(problems.problems.map { "\($0.place) \($0.message)" } == [said], "\(problems)")
        #expect(try AppDeclaration.read("id: shelf\ntitle: Shelf\nversion: 1000000\n").get().app.version == 1_000_000)
        #expect(try AppDeclaration.read("id: shelf\ntitle: Shelf\n").get().app.version == 1, "none given: the first")
    }

    @Test(arguments: [
        ("{ type: string, maxLength: 3, default: abcd }", "default is 4 characters: the field holds at most 3"),
        ("{ type: date, default: 2026-02-30 }", "default '2026-02-30' is not a calendar day YYYY-MM-DD"),
        ("{ type: date, default: 26-02-01 }", "default '26-02-01' is not a calendar day YYYY-MM-DD"),
        ("{ type: integer, default: \"12\" }", "default must be a whole number: the field is an integer"),
        ("{ type: integer, default: 1.5 }", "default must be a whole number: the field is an integer"),
        ("{ type: number, default: .nan }", "default must be a number: the field is a number"),
        ("{ type: counter, default: true }", "default must be a number: the field is a counter"),
        ("{ type: boolean, default: 1 }", "default must be true or false: the field is a boolean"),
        ("{ type: string, default: null }", "default is null: leave the default out for a field that starts empty"),
        ("{ type: string, default: [a] }", "default must be one value"),
        ("{ type: string, default: \"a\\u0000b\" }", "default holds a control character"),
        ("{ type: string, deprecated: maybe }", "deprecated must be true or false"),
    ])
    func aDefaultIsAValueOfItsFieldsType(_ field: String, _ said: String) throws {
        let text = "id: shelf\ntitle: Shelf\ncollections:\n  - name: shelf_books\n    fields:\n      f: \(field)\n"
        guard case .failure(let problems) = AppDeclaration.read(text) else {
            Issue.record("\(field) is refused")
            return
        }
        #expect(problems.problems.map { "\($0.place) \($0.message)" } == ["collections[0].fields.f.\(said)"], "\(problems)")
    }

    @Test func defaultsAndDeprecationsReadAndWriteBack() throws {
        let text = """
            id: shelf
            title: Shelf
            version: 3
            collections:
              - name: shelf_books
                fields:
                  title: { type: string, default: "It's" }
                  copies: { type: integer, nullable: false, default: 1 }
                  weight: { type: number, default: 0.5 }
                  lent: { type: boolean, default: false }
                  since: { type: date, default: 2024-02-29 }
                  note: { type: string, deprecated: true }
            """
        let app = try AppDeclaration.read(text).get().app
        let fields = app.collection("shelf_books").fields
        #expect(app.version == 3)
        #expect(fields["title"]?.defaultValue == .string("It's") && fields["copies"]?.defaultValue == .integer(1))
        #expect(fields["weight"]?.defaultValue == .number(0.5) && fields["lent"]?.defaultValue == .boolean(false))
        #expect(fields["since"]?.defaultValue == .string("2024-02-29") && fields["note"]?.deprecated == true)
        #expect(try AppDeclaration.read(AppDeclaration.yaml(of: app)).get().app == app, "written out, it reads back the same")
    }

    @Test func aNewVersionSaysItsStepsAndARequiredFieldNeedsADefault() throws {
        let old = try AppDeclaration.read(Self.shelf).get().app
        let text = Self.shelf.replacingOccurrences(of: "title: Shelf", with: "title: Shelf\nversion: 2")
            .replacingOccurrences(of: "      state: { type: string }", with: """
                      state: { type: string }
                      shelf: { type: integer, nullable: false, default: 1 }
                      brand: { type: string }
                """)
            .replacingOccurrences(of: "note: { type: string, maxLength: 50 }", with: "note: { type: string, maxLength: 80, deprecated: true }")
            .replacingOccurrences(of: "allowed: [shelved, lent]", with: "allowed: [shelved, lent, lost]")
            + "\n  - name: shelf_loans\n    fields:\n      who: { type: string }\n"
        let new = try AppDeclaration.read(text).get().app
        #expect(AppRedeploy.versionProblem(from: old, to: new) == nil)
        #expect(AppRedeploy.problems(from: old, to: new) == [], "a field that cannot be null is added with its default")
        #expect(AppRedeploy.steps(from: old, to: new) == [
            "adds shelf_books.brand (null by default)",
            "deprecates shelf_books.note",
            "lets shelf_books.note hold 80 characters",
            "adds shelf_books.shelf (1 by default)",
            "loosens a rule of shelf_books.state",
            "adds the collection shelf_loans (1 field(s))",
        ])
        // Its default is its own: a later version may not change it, nor give one to a field that had none.
        let changed = try AppDeclaration.read(text.replacingOccurrences(of: "version: 2", with: "version: 3")
            .replacingOccurrences(of: "default: 1 }", with: "default: 2 }")).get().app
        #expect(AppRedeploy.problems(from: new, to: changed).map(\.place) == ["collection shelf_books.fields.shelf.default"])
        let given = try AppDeclaration.read(text.replacingOccurrences(of: "version: 2", with: "version: 3")
            .replacingOccurrences(of: "brand: { type: string }", with: "brand: { type: string, default: x }")).get().app
        #expect(AppRedeploy.problems(from: new, to: given).map(\.place) == ["collection shelf_books.fields.brand.default"])
        // The same version otherwise declared, or a lower one, is refused naming the version to give.
        #expect(AppRedeploy.versionProblem(from: new, to: new)?.message.hasPrefix("is 2, the version served") == true)
        #expect(AppRedeploy.versionProblem(from: new, to: old)?.message == "is 1, below version 2 served: a version only goes up; give this declaration version 3")
    }
}
