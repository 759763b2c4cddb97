import EventualServer
import EventualStorage
import Logging

/// Deploys a declaration to the server's database at `location`, as `eventual-server apps deploy`
/// does from another process; a running server takes it up within a second or two.
public func deployApp(_ text: String, to location: DatabaseLocation, lowersMinimum: Bool = false) async throws -> DeployedApps.Outcome {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    let database = try await Database.open(location, logger: logger)
    do {
        let outcome = try await DeployedApps(database: database, logger: logger).deploy(text, lowersMinimum: lowersMinimum)
        await database.close()
        return outcome
    } catch {
        await database.close()
        throw error
    }
}
