import EventualAPI

extension APIService {
    /// `GET /v1/apps/{appId}`: the app as deployed here, so that a device can tell whether this
    /// server serves its app, and as the device knows it.
    func getApp(_ input: Operations.GetApp.Input) async throws -> Operations.GetApp.Output {
        guard AppDeclaration.isAppID(input.path.appId) else {
            throw APIError.badRequest("appId must be an app's id: a lowercase letter, then up to 31 lowercase letters, digits or _")
        }
        guard let deployed = catalog.snapshot.app(input.path.appId) else {
            throw APIError.notFound(Self.notServed(input.path.appId))
        }
        let collections = deployed.app.collections.map { collection in
            Components.Schemas.DeployedCollection(
                name: collection.name, scope: collection.scope == .space ? .space : .person,
                fields: .init(additionalProperties: collection.fields.mapValues { field in
                    Components.Schemas.DeployedField(_type: .init(rawValue: field.type.rawValue) ?? .string, nullable: field.nullable,
                                                     maxLength: field.maxLength, deprecated: field.deprecated ? true : nil)
                }))
        }
        return .ok(.init(body: .json(.init(id: deployed.app.id.rawValue, title: deployed.app.title, version: deployed.app.version,
                                           minimumVersion: deployed.app.minimumVersion,
                                           verifiedEmail: deployed.app.needsVerifiedEmail, revision: deployed.revision,
                                           deployedAt: deployed.deployedAt, collections: collections,
                                           declaration: deployed.declaration))))
    }

    /// The served app `id` names: a 400 when `id` is not an app's id, a 404 naming it when this
    /// server does not serve it. A registration or a space of an app nobody serves here is refused,
    /// not filed under a name nobody serves.
    func servedApp(_ id: String) throws -> EventualApp {
        guard AppDeclaration.isAppID(id) else { throw APIError.badRequest("app must be an app's id: a lowercase letter, then up to 31 lowercase letters, digits or _") }
        guard let deployed = catalog.snapshot.app(id) else { throw APIError.notFound(Self.notServed(id)) }
        return deployed.app
    }

    /// `id` when it names a served app (nil for none), or the refusal `servedApp` gives.
    func servedAppID(_ id: String?) throws -> String? {
        try id.map { try servedApp($0).id.rawValue }
    }

    static func notServed(_ id: String) -> String {
        "this server does not serve the app '\(id.prefix(32))': its operator deploys it (eventual-server apps deploy FILE)"
    }
}
