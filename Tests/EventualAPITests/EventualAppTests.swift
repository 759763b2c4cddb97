import EventualAPI
import Testing

@Suite("The app registry: every app once, and everything below reads it")
struct EventualAppTests {
    @Test func everyAppIsRegisteredOnceUnderTheNameTheContractKnows() {
        let names = EventualApp.all.map(\.id.rawValue)
        #expect(Set(names).count == names.count)
        // NB: the contract's AppName is the one list outside the registry: a new app is told here to add itself there.
        #expect(Set(Components.Schemas.AppName.allCases.map(\.rawValue)) == Set(names))
        #expect(AnalyticsApp.allCases == EventualApp.all.map(\.id))
        for app in EventualApp.all {
            #expect(AnalyticsApp(rawValue: app.id.rawValue) == app.id)
            #expect(EventualApp.named(app.id)?.title == app.title)
            #expect(!app.title.isEmpty)
        }
        #expect(AnalyticsApp(rawValue: "") == nil && AnalyticsApp(rawValue: "Pantry") == nil && AnalyticsApp(rawValue: "pantry\u{0}") == nil)
    }

    @Test func theServerAcceptsExactlyTheRegisteredAppsCollectionsEachUnderItsApp() {
        let registered = EventualApp.all.flatMap { app in app.collections.map { (app.id, $0) } }
        #expect(Set(SyncCollections.all.keys) == Set(registered.map(\.1.name)))
        #expect(SyncCollections.all.count == registered.count, "a collection registered twice")
        for (app, collection) in registered {
            #expect(collection.app == app, "\(collection.name) says it is \(collection.app.rawValue)'s")
        }
    }
}
