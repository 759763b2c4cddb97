/// SustainU: its data is the server's answers to its calls (points, scans, tips), so its
/// declaration (`Declarations/sustainu.app.yaml`) has no synced collection.
extension AnalyticsApp {
    public static let sustainU = AnalyticsApp(declaring: "sustainu")
}

extension EventualApp {
    /// SustainU: the nearest campus recycling point, scans, points and streaks.
    public static let sustainU = BuiltInApps.declared("sustainu")
}
