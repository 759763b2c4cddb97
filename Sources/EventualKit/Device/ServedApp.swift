import EventualAPI
import Foundation

/// Whether the server serves this device's app as the device knows it (`GET /v1/apps/{id}`):
/// asked at an online sign-in and at a sync, so that a server without the app, or with an older
/// declaration of it, is said once in one line instead of failing change by change.
public enum ServedApp: Sendable, Equatable {
    /// The server serves the app with every collection and field this device writes.
    case served
    /// The server does not serve the app at all (its operator has not deployed it).
    case notServed(app: String)
    /// The server serves the app without some of what this device writes: each is named.
    case servedWithout(app: String, missing: [String])

    /// What a person is told, or nil when all is well.
    public var words: String? {
        switch self {
        case .served: return nil
        case .notServed(let app):
            return "This server does not serve \(app) yet: what you do is kept on this device, and refused changes wait in"
                + " failures; ask its operator to deploy the app (eventual-server apps deploy)"
        case .servedWithout(let app, let missing):
            return "This server knows \(app) without \(missing.prefix(3).joined(separator: ", "))"
                + (missing.count > 3 ? " and \(missing.count - 3) more" : "")
                + ": changes that use them are refused and wait in failures; ask its operator to deploy the app's new declaration"
        }
    }

    /// What `app`'s collections need of the server's declaration of it: each collection and field
    /// the device writes that `served` lacks, or holds with another type.
    static func compare(_ app: EventualApp, with served: Components.Schemas.DeployedApp) -> ServedApp {
        var missing: [String] = []
        for collection in app.collections {
            guard let known = served.collections.first(where: { $0.name == collection.name }) else {
                missing.append("the collection \(collection.name)")
                continue
            }
            for (name, field) in collection.fields.sorted(by: { $0.key < $1.key }) {
                guard let servedField = known.fields.additionalProperties[name] else {
                    missing.append("\(collection.name).\(name)")
                    continue
                }
                if servedField._type.rawValue != field.type.rawValue { missing.append("\(collection.name).\(name) as \(field.type.rawValue)") }
            }
        }
        return missing.isEmpty ? .served : .servedWithout(app: app.title, missing: missing)
    }
}

extension DeviceAccounts {
    /// Asks the server whether it serves this device's app as the device declares it; nil when
    /// it cannot be told now (offline, or no answer within `timeout`).
    public func servedApp(timeout: Duration = .seconds(5)) async -> ServedApp? {
        let registration = app.registration
        switch await link.deployedApp(registration.id.rawValue, timeout: timeout) {
        case .deployed(let served)?: return ServedApp.compare(registration, with: served)
        case .notDeployed?: return .notServed(app: registration.title)
        case nil: return nil
        }
    }
}

extension ServerLink {
    /// What `GET /v1/apps/{id}` says of an app.
    enum DeployedAnswer: Sendable {
        case deployed(Components.Schemas.DeployedApp)
        case notDeployed
    }

    /// The server's declaration of the app `id`, or that it serves none; nil when it cannot be
    /// told now (offline, another answer, or none within `timeout`).
    func deployedApp(_ id: String, timeout: Duration) async -> DeployedAnswer? {
        let client = self.client
        let asked = Task { try await client.getApp(path: .init(appId: id)) }
        let timer = Task {
            try await Task.sleep(for: timeout)
            asked.cancel()
        }
        defer { timer.cancel() }
        switch try? await asked.value {
        case .ok(let ok)?:
            guard case .json(let served) = ok.body else { return nil }
            return .deployed(served)
        case .notFound?: return .notDeployed
        default: return nil
        }
    }
}
