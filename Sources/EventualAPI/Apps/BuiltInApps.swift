import Foundation

/// The apps built into this repository, read from their declaration files
/// (`Declarations/<id>.app.yaml`, bundled with this module): the one spelling of their
/// collections, fields and rules. `EventualApp.pantry` and `SyncCollections.pantryItems` are
/// these files read once.
enum BuiltInApps {
    /// The built-in app `id`, as its file declares it.
    /// NB: a bundled file that does not read is a broken build, not bad input: every one is read
    /// back and checked by `AppDeclarationTests`, so this never stops a process that passed them.
    static func declared(_ id: String) -> EventualApp {
        guard let url = Bundle.module.url(forResource: "\(id).app", withExtension: "yaml", subdirectory: "Declarations"),
              let text = try? String(contentsOf: url, encoding: .utf8) else {
            preconditionFailure("the built-in declaration \(id).app.yaml is not in EventualAPI's bundle")
        }
        switch AppDeclaration.read(text) {
        case .success(let declaration): return declaration.app
        case .failure(let problems): preconditionFailure("the built-in declaration \(id).app.yaml: \(problems)")
        }
    }
}

extension EventualApp {
    /// Its collection called `name`, which its declaration has.
    func collection(_ name: String) -> SyncCollection {
        guard let collection = collections.first(where: { $0.name == name }) else {
            preconditionFailure("the app \(id.rawValue) declares no collection \(name)")
        }
        return collection
    }
}
