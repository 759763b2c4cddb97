import CommandLineSupport
import Recycling

/// `--server`, `--data-dir` and `--no-analytics`, taken by every command the way every app's
/// command takes them.
typealias GlobalOptions = SharedOptions<SustainUCommand>

extension GlobalOptions {
    func app() throws -> RecyclingApp {
        var configuration = try configuration(RecyclingConfiguration.init)
        if let seconds = try answerTimeout() {
            // NB: how long the server may take to start answering is how long any wait on it may
            // be (the shared options set a local command's; these are the app's own waits).
            configuration.refreshBudget = .seconds(seconds)
            configuration.catchUpBudget = .seconds(max(3, seconds))
            configuration.scanBudget = .seconds(max(10, seconds))
        }
        return RecyclingApp(configuration: configuration)
    }

    /// The signed-in person's recycling, after sending what waits (briefly) so that results that
    /// came in while they were away can be announced. `network: false` for a command that reads
    /// only this device's data: it opens no connection at all.
    func open(network: Bool = true) async throws -> UserRecycling {
        let recycling = try await app().open()
        await recycling.analytics.record(.appOpened)
        if network { await recycling.catchUp() }
        return recycling
    }
}
