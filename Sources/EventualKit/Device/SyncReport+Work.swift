extension SyncReport {
    /// Calls of this round that were the engine's own upkeep, not something the person did: the
    /// fetch of a record's server version after a settle. A sync's summary counts the others.
    public var upkeepCalls: Int { callsByOperation[RecordRefetch.operation] ?? 0 }
}
