/// How long an app waits for a sync it asks for (`SignedInDevice.sync`). Whatever the wait, the
/// round itself is not cut short: what it has not done when the wait ends goes on in the
/// background or with the next round, and nothing queued is lost.
public enum SyncWait: Sendable, Equatable {
    /// Until the round ends: the `sync` command, the first sync after a sign-in.
    case untilDone
    /// The local command budget (`DeviceConfiguration.localCommandSyncBudget`, 300 ms): after a
    /// local write, so that a person is never held up by the network.
    case localBudget
    /// As long as the server may take to answer a request (its connect and first-byte timeouts),
    /// once it answered a check within the local budget: for a change the person waits to see
    /// taken (a household created, an invitation accepted); a silent server costs a moment.
    case serverAnswer
    /// At most this long.
    case atMost(Duration)
    /// At most this long, once the server answered a check within the local budget: a slow answer
    /// worth waiting for (a scan's classification) is waited for, a dead or silent server is not.
    case patient(Duration)
}
