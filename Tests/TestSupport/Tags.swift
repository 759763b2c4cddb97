import Testing

/// The kinds of tests the fast lane (`scripts/fast-tests.sh`) leaves out; CI runs every test.
extension Tag {
    /// Runs the built executables, or a real server across several commands: seconds per test.
    @Tag public static var endToEnd: Self
    /// Many seeds of random faults (`SOAK_SEEDS`): minutes.
    @Tag public static var soak: Self
    /// Drives a headless Chromium.
    @Tag public static var browser: Self
}
