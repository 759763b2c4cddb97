import EventualKit

extension ServerLink.Timeouts {
    /// For a test's own calls to a live server (registering, signing in, probing what it holds):
    /// a machine busy with the whole suite took more than the default 5 s to answer a login; the
    /// suites' time limits bound each test.
    public static let patient = ServerLink.Timeouts(connect: .seconds(10), firstByte: .seconds(30))
}
