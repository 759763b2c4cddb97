import EventualKit

extension Settlement {
    /// What a discard did to the row, said after "Discarded your use of 2 of Eggs": gone when the
    /// server has no such `record` (it never had it, when it was made here), the server's version
    /// back (`now`: what the row says now, " (1 left)"), fetched by the settle itself, or, when
    /// the server did not say what it holds and could not be asked now, kept until it answers.
    public func discarded(now: String = "", record: String, command: String) -> String {
        if neverOnServer { return ": the server never had it, so it is gone from this device." }
        if removed { return ": the server has no such \(record), so it is gone from this device." }
        if restored { return "; the server's version is back\(now)." }
        if fetched { return "; this device now shows the server's version\(now)." }
        return "; the server did not say what it holds, so this device shows your change until it does: "
            + "it is asked at the next sync (`\(command) sync`)."
    }
}
