import Foundation
import TestParallelism
import Testing

@Suite("The test run itself")
struct TestParallelismTests {
    /// Every test of a run at once thrashed a 2-core machine until tests ran past their limits
    /// and some never ended; the width is set before `main` (Tests/TestParallelism).
    @Test func swiftTestingRunsABoundedNumberOfTestsAtOnce() {
        let width = eventual_test_parallelism_width()
        let setByTheEnvironment = ProcessInfo.processInfo.environment["SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"].flatMap(Int.init)
        #expect(width > 0)
        #expect(setByTheEnvironment == width)
    }
}
