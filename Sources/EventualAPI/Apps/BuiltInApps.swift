import Foundation

/// The apps built into this repository, read from their declaration files
/// (`Declarations/<id>.app.yaml`, bundled with this module): the one spelling of their
/// collections, fields and rules. `EventualApp.pantry` and `SyncCollections.pantryItems` are
/// these files read once.
public enum BuiltInApps {
    /// The built-in app `id`, as its file declares it.
    /// NB: a bundled file that does not read is a broken build, not bad input: every one is read
    /// back and checked by `AppDeclarationTests`, so this never stops a process that passed them.
    static func declared(_ id: String) -> EventualApp {
        let text = text(of: id)
        switch AppDeclaration.read(text) {
        case .success(let declaration): return declaration.app
        case .failure(let problems): preconditionFailure("the built-in declaration \(id).app.yaml: \(problems)")
        }
    }

    /// The text of the built-in app `id`'s declaration file, as bundled: what the server deploys
    /// at its first start (`DeployedApps.deployBuiltIns`).
    public static func text(of id: String) -> String {
        guard let url = Bundle.module.url(forResource: "\(id).app", withExtension: "yaml", subdirectory: "Declarations"),
              let text = try? String(contentsOf: url, encoding: .utf8) else {
            preconditionFailure("the built-in declaration \(id).app.yaml is not in EventualAPI's bundle")
        }
        return text
    }
}
