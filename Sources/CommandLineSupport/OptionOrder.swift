import ArgumentParser

/// Lets every option come before its subcommand's name as well as after it: `spendiq --json list`
/// as `spendiq list --json`. ArgumentParser looks for a subcommand only right after its parent's
/// own options, and refuses the subcommand's options before its name.
enum OptionOrder {
    /// The command `arguments` name: as typed when ArgumentParser takes them so, else with each
    /// subcommand's name moved before the options typed ahead of it (and then its refusal is the
    /// one said: it speaks of the subcommand the person meant).
    static func parse<Root: ParsableCommand>(_ arguments: [String], as root: Root.Type) throws -> any ParsableCommand {
        do {
            return try Root.parseAsRoot(arguments)
        } catch where Root.exitCode(for: error) != .success {
            // NB: only on a refusal, so that a command typed in the usual order pays nothing.
            let reordered = subcommandsFirst(arguments, root: Root.self)
            guard reordered != arguments else { throw error }
            return try Root.parseAsRoot(reordered)
        }
    }

    /// The arguments with the first subcommand name that follows options (`--json list`) moved
    /// ahead of them, at every level (`--json accounts list`: `accounts list --json`).
    // NB: which option takes a value is not asked: the first word that names a subcommand is taken
    // for it. An option's value that names one as well ends, at worst, in a refusal.
    static func subcommandsFirst(_ arguments: [String], root: any ParsableCommand.Type) -> [String] {
        var arguments = arguments
        var node = root, start = 0
        while start < arguments.count {
            if let child = subcommand(of: node, named: arguments[start]) {
                node = child
                start += 1
                continue
            }
            guard arguments[start].hasPrefix("-"),
                  // NB: ArgumentParser's own `help` takes subcommands' names as its arguments.
                  let index = arguments[start...].prefix(while: { $0 != "--" && $0 != "help" })
                      .firstIndex(where: { subcommand(of: node, named: $0) != nil })
            else { break }
            arguments.insert(arguments.remove(at: index), at: start)
        }
        return arguments
    }

    private static func subcommand(of node: any ParsableCommand.Type, named name: String) -> (any ParsableCommand.Type)? {
        node.configuration.subcommands.first { $0._commandName == name || $0.configuration.aliases.contains(name) }
    }
}
