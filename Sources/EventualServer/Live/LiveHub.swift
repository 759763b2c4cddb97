import EventualAPI
import Foundation
import Synchronization

/// A space moved: a push committed changes of `collections` in it, the newest at `position`.
/// `members` are the people who belonged to it when the push committed; `by` is the pushing
/// token's fingerprint (its device pulls after its own push, and needs no signal).
struct LiveMove: Sendable, Equatable, Codable {
    let space: String
    let position: Int64
    let collections: [String]
    let members: [String]
    let by: String?
}

/// The live connections of this server process, by person, and the signals they are owed.
///
/// Every signal goes through `deliver`: from the push itself on SQLite (one process), from the
/// database's `NOTIFY` on PostgreSQL (every process, this one too). A connection gets a space's
/// signal only when its person was a member when the push committed and it subscribes to one of
/// the collections changed, and never for its own push.
final class LiveHub: Sendable {
    private let connections = Mutex<[String: [ObjectIdentifier: LiveConnection]]>([:])

    init() {}

    func register(_ connection: LiveConnection) {
        connections.withLock { $0[connection.userID, default: [:]][ObjectIdentifier(connection)] = connection }
    }

    func unregister(_ connection: LiveConnection) {
        connections.withLock { all in
            all[connection.userID]?[ObjectIdentifier(connection)] = nil
            if all[connection.userID]?.isEmpty == true { all[connection.userID] = nil }
        }
    }

    /// How many devices hold a channel to this process.
    var count: Int { connections.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    func deliver(_ move: LiveMove) {
        for connection in connections(of: move.members) where connection.tokenFingerprint != move.by {
            if connection.subscribes(toAny: move.collections) { connection.offer(space: move.space, position: move.position) }
        }
    }

    /// Tells every device of `people` to pull once (a space joined or left changes what they see).
    func poke(_ people: [String]) {
        for connection in connections(of: people) { connection.offerPull() }
    }

    /// Tells every device connected here to pull once: signals may have been missed.
    func pokeAll() {
        for connection in connections.withLock({ $0.values.flatMap(\.values) }) { connection.offerPull() }
    }

    /// The hashes of the tokens the open channels were opened with, each once.
    var tokenHashes: Set<String> {
        connections.withLock { Set($0.values.flatMap(\.values).map(\.tokenHash)) }
    }

    /// Closes the channels opened with one of the tokens of `hashes`. NB: the tokens found no
    /// longer good, not all but the good ones: a channel opened since the check was not checked.
    func closeChannels(ofTokens hashes: Set<String>) {
        for connection in connections.withLock({ $0.values.flatMap(\.values) }) where hashes.contains(connection.tokenHash) {
            connection.close()
        }
    }

    /// Closes the channels opened with a token now signed out.
    func signedOut(_ fingerprint: String) {
        for connection in connections.withLock({ $0.values.flatMap(\.values) }) where connection.tokenFingerprint == fingerprint {
            connection.close()
        }
    }

    private func connections(of people: [String]) -> [LiveConnection] {
        connections.withLock { all in people.flatMap { all[$0].map { Array($0.values) } ?? [] } }
    }
}

/// One device's channel: what it is owed, coalesced. A reader slower than the signals gets the
/// newest position of each space it is owed, never a queue: what waits is one number per space.
///
/// Its socket's handler (`LiveSocket`) attaches a wake: called once when something becomes owed,
/// not again until the handler has taken what is owed, however many signals come meanwhile.
final class LiveConnection: Sendable {
    let userID: String
    /// The hash of the channel's token (its checks), and the part of it that names the channel
    /// in a signal and a sign-out (`AccessToken.fingerprint(ofHash:)`).
    let tokenHash: String
    let tokenFingerprint: String
    /// nil: every collection.
    private let collections: Set<String>?

    private struct Owed {
        var positions: [String: Int64] = [:]
        var pull = false
        var closed = false
        /// A wake was called and the handler has not taken since.
        var woken = false
        var wake: (@Sendable () -> Void)?
    }

    private let owed = Mutex(Owed())

    init(userID: String, tokenHash: String, collections: Set<String>?) {
        self.userID = userID
        self.tokenHash = tokenHash
        self.tokenFingerprint = AccessToken.fingerprint(ofHash: tokenHash)
        self.collections = collections
    }

    func subscribes(toAny names: [String]) -> Bool {
        guard let collections else { return true }
        return names.contains { collections.contains($0) }
    }

    func offer(space: String, position: Int64) {
        owe { $0.positions[space] = max($0.positions[space] ?? 0, position) }
    }

    func offerPull() {
        owe { $0.pull = true }
    }

    /// Ends the channel: its handler sends the close. NB: it wakes the handler even when a wake
    /// is pending, so a reader too slow to take its signals is still closed at once.
    func close() {
        let wake = owed.withLock { owed -> (@Sendable () -> Void)? in
            owed.closed = true
            owed.woken = true
            return owed.wake
        }
        wake?()
    }

    var isClosed: Bool { owed.withLock { $0.closed } }

    /// Calls `wake` whenever something becomes owed (at once if something is), until `detach`.
    func attach(_ wake: @escaping @Sendable () -> Void) {
        let owing = owed.withLock { owed -> Bool in
            owed.wake = wake
            let owing = owed.closed || owed.pull || !owed.positions.isEmpty
            owed.woken = owing
            return owing
        }
        if owing { wake() }
    }

    /// Forgets the wake (the socket closed): nothing holds the handler after.
    func detach() {
        owed.withLock { $0.wake = nil }
    }

    /// What is owed now, as the frames to send, and nothing owed after.
    func take() -> [LiveWire.Message] {
        owed.withLock { owed in
            var messages: [LiveWire.Message] = []
            if owed.pull { messages.append(LiveWire.Message(type: .pull)) }
            if !owed.positions.isEmpty { messages.append(LiveWire.Message(type: .moved, spaces: owed.positions)) }
            owed.positions = [:]
            owed.pull = false
            owed.woken = false
            return messages
        }
    }

    private func owe(_ change: (inout Owed) -> Void) {
        let wake = owed.withLock { owed -> (@Sendable () -> Void)? in
            change(&owed)
            guard !owed.woken else { return nil }
            owed.woken = true
            return owed.wake
        }
        wake?()
    }
}

extension AccessToken {
    /// The part of a token's hash that names its channels (in a signal, and in a sign-out
    /// another process hears of): enough to tell one person's devices apart, never the token.
    static func fingerprint(ofHash hash: String) -> String { String(hash.prefix(16)) }
}
