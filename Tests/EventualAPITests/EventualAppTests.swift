import EventualAPI
import Testing

@Suite("The built-in apps: each once, and everything below reads them")
struct EventualAppTests {
    @Test func everyBuiltInAppIsListedOnce() {
        let names = EventualApp.builtIn.map(\.id.rawValue)
        #expect(Set(names).count == names.count)
        #expect(names.sorted() == ["pantry", "spendiq", "sustainu"], "Chores is an app outside this repository (Examples/Chores)")
        #expect(AnalyticsApp.allCases == EventualApp.builtIn.map(\.id))
        for app in EventualApp.builtIn {
            #expect(AnalyticsApp(rawValue: app.id.rawValue) == app.id)
            #expect(EventualApp.named(app.id)?.title == app.title)
            #expect(!app.title.isEmpty)
        }
        #expect(AnalyticsApp(rawValue: "") == nil && AnalyticsApp(rawValue: "Pantry") == nil && AnalyticsApp(rawValue: "pantry\u{0}") == nil)
    }

    @Test func theBuiltInCollectionsAreExactlyTheBuiltInAppsEachUnderItsApp() {
        let registered = EventualApp.builtIn.flatMap { app in app.collections.map { (app.id, $0) } }
        #expect(Set(SyncCollections.all.keys) == Set(registered.map(\.1.name)))
        #expect(SyncCollections.all.count == registered.count, "a collection registered twice")
        for (app, collection) in registered {
            #expect(collection.app == app, "\(collection.name) says it is \(collection.app.rawValue)'s")
        }
    }
}
