import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The signed-in person's SustainU on this device: everything a screen calls once signed in.
public final class UserRecycling: Sendable {
    /// The store, the engine, usage events and the outbox, as every app has them.
    public let device: SignedInDevice
    let app: RecyclingApp
    let points: PointCatalogue
    let packaging: PackagingCatalogue
    let scans: ScanStore
    let cache: ReadCache
    let clock: ScanClock

    public init(session: Session, host app: RecyclingApp) throws {
        self.app = app
        let configuration = app.configuration
        try FileManager.default.createDirectory(at: configuration.photosDirectory(session.userID), withIntermediateDirectories: true)
        let store = try SignedInDevice.store(of: session, accounts: app.accounts, wallClock: configuration.wallClock)
        let vault = app.vault
        // NB: a link of its own for scans sent by the engine: the server may wait up to 20 s for its vision model.
        let scanLink = ServerLink(serverURL: configuration.serverURL, timeout: configuration.scanTimeouts.firstByte + .seconds(10),
                                  timeouts: configuration.scanTimeouts) { vault.accessToken }
        let link = app.accounts.link
        // NB: the engine's clock, made before the device for the scan handler, hears the scan link's
        // answers too (a scan's is often the first of a process).
        let deviceClock = DeviceClock(store: store)
        deviceClock.listen(to: link.serverTime)
        deviceClock.listen(to: scanLink.serverTime)
        clock = ScanClock(clock: deviceClock)
        device = SignedInDevice(session: session, store: store, accounts: app.accounts, clock: deviceClock,
                                calls: ScanCalls.handlers(scanClient: scanLink.client, photos: configuration.photosDirectory(session.userID),
                                                          attachments: SignedInDevice.attachmentsFolder(of: session, accounts: app.accounts),
                                                          clock: clock))
        points = PointCatalogue(store: store, client: link.client)
        packaging = PackagingCatalogue(store: store, client: link.client)
        scans = ScanStore(store: store)
        cache = ReadCache(store: store)
    }

    var configuration: RecyclingConfiguration { app.configuration }

    // MARK: - Points

    /// The nearest points (or, without a position, the first ones), from the saved copy after
    /// revalidating it if the server answers within the local budget. The first time, with no
    /// saved copy and no network: `RecyclingError.needsConnectionForPoints`.
    public func points(near origin: GeoPosition?, material: PointMaterial? = nil, limit: Int = 10,
                       from source: AnalyticsEvent.MapSource = .navbar) async throws -> PointsAnswer {
        guard (1...1000).contains(limit) else { throw RecyclingError.invalidLimit(limit) }
        await analytics.record(.mapOpened(from: source))
        let fresh = await refreshPoints()
        guard let meta = try points.meta() else { throw RecyclingError.needsConnectionForPoints }
        let saved = try points.all()
        let index = PointIndex(saved)
        let found = origin.map { index.nearest(to: $0, limit: limit, material: material) } ?? index.first(limit, material: material)
        let total = material.map { material in saved.filter { $0.materials.contains(material) }.count } ?? saved.count
        return PointsAnswer(points: found, total: total, fetchedAt: meta.fetchedAt, fresh: fresh)
    }

    /// Every saved point, for a map (or `--geojson`).
    public func allPoints() async throws -> PointsAnswer {
        let fresh = await refreshPoints()
        guard let meta = try points.meta() else { throw RecyclingError.needsConnectionForPoints }
        let all = try points.all().map { NearbyPoint(point: $0, distanceMeters: nil) }
        return PointsAnswer(points: all, total: all.count, fetchedAt: meta.fetchedAt, fresh: fresh)
    }

    /// A point's details, from the saved copy (loaded first if there is none). Showing a point
    /// counts no visit: `visit(pointID:)` does, when the person says they are there. `source`
    /// says where the map was entered from (a point's link on the main page, by default).
    public func point(id pointID: String, from source: AnalyticsEvent.MapSource = .main) async throws -> RecyclingPoint {
        if try points.meta() == nil { await refreshPoints() }
        guard try points.meta() != nil else { throw RecyclingError.needsConnectionForPoints }
        guard let point = try points.point(id: pointID) else { throw RecyclingError.noSuchPoint(pointID) }
        await analytics.record(.mapOpened(from: source))
        return point
    }

    /// Counts the person's visit to a point (they are there): sent now if the server answers at
    /// once, else queued. Returns the point, with the count this device knows, and whether the
    /// visit waits to be sent.
    public func visit(pointID: String) async throws -> (point: RecyclingPoint, queued: Bool) {
        if try points.meta() == nil { await refreshPoints() }
        guard try points.meta() != nil else { throw RecyclingError.needsConnectionForPoints }
        guard try points.point(id: pointID) != nil else { throw RecyclingError.noSuchPoint(pointID) }
        let entry = try await store.write { tx in
            let entry = try tx.enqueueCall(ScanCalls.visit, payload: VisitCall(visitId: UUIDv7.make(), pointId: pointID))
            try PointCatalogue.countVisit(pointID: pointID, tx.db)
            return entry
        }
        await analytics.record(.pointVisited(pointID))
        await sendQueued()
        guard let point = try points.point(id: pointID) else { throw RecyclingError.noSuchPoint(pointID) }
        let queued = try outbox.entries().contains { $0.id == entry && $0.state != .failed }
        return (point, queued)
    }

    // MARK: - Scans

    /// Scans an item by photo and/or barcode. The scan lands on the device first (the photo is
    /// copied into the app's folder) and waits in the outbox; a barcode the packaging catalogue
    /// knows gets its bin at once, as an offline guess. If the server can be reached it then
    /// classifies the scan, waiting up to the scan budget for its answer.
    public func scan(photo: URL? = nil, barcode: String? = nil, at position: GeoPosition? = nil, pointID: String? = nil,
                     now: Date? = nil) async throws -> ScanOutcome {
        guard photo != nil || barcode != nil else { throw RecyclingError.nothingToScan }
        let started = ContinuousClock.now
        await analytics.record(.scanStarted)
        let gtin: GTIN?
        do {
            gtin = try barcode.map { try GTIN($0) }
        } catch {
            throw RecyclingError.invalidBarcode(barcode ?? "")
        }
        if let position, !position.isValid { throw RecyclingError.invalidPosition(position.description) }
        // NB: a point the saved copy does not know is a typo; without a copy the server judges.
        if let pointID, try points.meta() != nil, try points.point(id: pointID) == nil { throw RecyclingError.noSuchPoint(pointID) }
        let scanID = UUIDv7.make()
        let prepared = try photo.map { try PhotoFile.prepare($0, with: device.attachments) }
        let knownParts = try gtin.flatMap { try packaging.parts(of: $0) } ?? []
        let guess = TrashType(packaging: knownParts)
        // NB: by the server's time when this device's clock is known to be off, and corrected when
        // sent if it was not known (see ScanClock).
        let stamp = now.map { ScanClock.Stamp(takenAt: UnixMillis.milliseconds($0), deviceTakenAt: UnixMillis.milliseconds($0), sure: true) }
            ?? clock.stamp()
        let call = ScanCall(scanId: scanID, takenAt: stamp.takenAt, timeZone: configuration.timeZone.identifier,
                            barcode: gtin?.normalized, photoFile: nil, photoAttachment: prepared?.reference.description, pointId: pointID,
                            latitude: position?.latitude, longitude: position?.longitude,
                            deviceTakenAt: stamp.deviceTakenAt, clockSure: stamp.sure)
        // NB: the photo's upload first, in the same transaction: the scan is sent after it, in the outbox's order.
        try await store.write { tx in
            if let prepared { try tx.queueUpload(prepared) }
            let entry = try tx.enqueueCall(ScanCalls.scan, payload: call)
            try ScanStore.insert(call, outboxID: entry, guess: guess, parts: knownParts, tx.db)
        }
        // NB: ask first whether the server answers at all, so that a dead or silent one costs a
        // moment, not the scan budget kept for a slow vision model.
        let connectivity = await reachable(within: configuration.localCommandSyncBudget)
        var reason: String?
        if connectivity == .online {
            let report = await device.sync(.atMost(configuration.scanBudget), pull: false)
            reason = report.finished ? report.failure?.description : "the server is still classifying it"
        } else {
            reason = serverSilent ? "the server is not answering" : "offline"
        }
        guard let scan = try scans.scan(id: scanID) else { throw RecyclingError.nothingToScan }
        if scan.state != .waiting { try await scans.markAnnounced(scanID) }
        if scan.state == .classified || scan.offlineGuess {
            // NB: the recommendation the person sees now, the server's or the device's own guess.
            await analytics.record(.scanAnswered(trashType: scan.trashType ?? "none", after: ContinuousClock.now - started))
        }
        return ScanOutcome(scan: scan, sent: scan.state != .waiting, reason: scan.state == .waiting ? reason : nil)
    }

    /// Every scan on this device, newest first; listing them counts as having been told of them.
    public func allScans() async throws -> [Scan] {
        _ = try await scans.takeAnnouncements()
        return try scans.all()
    }

    /// Every scan now, then again each time the list changes (a scan added, sent, answered,
    /// refused or dropped), until the iterating task is cancelled: a live query of the scans and
    /// the outbox entries that send them.
    public func watchScans() -> AsyncThrowingStream<[Scan], any Error> {
        store.observe(tables: ["scans"], outbox: true) { db in try ScanStore.all(db) }
    }

    /// The scans and visits the server refused, oldest first, each with its words.
    public func failures() throws -> [OutboxLine] {
        try device.outbox.entries(state: .failed).map { try device.line($0) }
    }

    /// How many scans the server answered since the person was last told (and marks them told):
    /// "2 scans were classified while you were away, and 1 could not be".
    public func takeClassifiedWhileAway() async throws -> AnsweredWhileAway {
        try await scans.takeAnnouncements()
    }

    // MARK: - Score, leaderboard, tips

    /// The person's points and streaks, from the server or, offline, the saved copy.
    public func score() async throws -> Cached<Score> {
        let client = device.link.client
        let zone = configuration.timeZone.identifier
        return try await cachedRead("recycling.score", what: "your score") { _ in
            switch try await client.getRecyclingScore(query: .init(timeZone: zone)) {
            case .ok(let answer): return .fresh(try JSONEncoder().encode(Score(try answer.body.json)), etag: nil)
            case .badRequest(let answer): throw try answer.body.json.failure
            case .unauthorized(let answer): throw try answer.body.json.failure
            case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Loading the score")
            }
        }
    }

    /// The people with the most points.
    public func leaderboard(limit: Int = 10) async throws -> Cached<[LeaderboardEntry]> {
        guard (1...100).contains(limit) else { throw RecyclingError.invalidLeaderboardLimit(limit) }
        let client = device.link.client
        return try await cachedRead("recycling.leaderboard.\(limit)", what: "the leaderboard") { _ in
            switch try await client.getRecyclingScoreboard(query: .init(limit: limit)) {
            case .ok(let answer):
                let entries = try answer.body.json.entries.map { LeaderboardEntry(username: $0.username, total: $0.total) }
                return .fresh(try JSONEncoder().encode(entries), etag: nil)
            case .badRequest(let answer): throw try answer.body.json.failure
            case .unauthorized(let answer): throw try answer.body.json.failure
            case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Loading the leaderboard")
            }
        }
    }

    /// The recycling tips, one per trash type (revalidated with their ETag).
    public func tips() async throws -> Cached<[Tip]> {
        try await tips(patient: false)
    }

    /// `patient`: the person asked for the network (a sync), so a saved copy does not cut the wait short.
    private func tips(patient: Bool) async throws -> Cached<[Tip]> {
        let client = device.link.client
        return try await cachedRead("recycling.tips", what: "the recycling tips", patient: patient) { etag in
            switch try await client.getRecyclingTips(headers: .init(ifNoneMatch: etag)) {
            case .ok(let answer):
                return .fresh(try JSONEncoder().encode(try answer.body.json.tips.map(Tip.init)), etag: answer.headers.eTag)
            case .notModified: return .notModified
            case .badRequest(let answer): throw RemoteFailure.status(400, message: try answer.body.json.message)
            case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Loading the tips")
            }
        }
    }

    /// Records that the person opened the tip of a trash type, and, with `readFor`, how long they
    /// read it (a screen calls this when the tip closes).
    public func tipOpened(_ trashType: String) async {
        await analytics.record(.tipOpened(trashType: trashType))
    }

    public func tipClosed(_ trashType: String, readFor duration: Duration) async {
        await analytics.record(.tipClosed(trashType: trashType, after: duration))
    }

    /// Records the daily reminder shown to the person, or opened by them.
    public func reminderShown(_ reminder: Reminder) async {
        if reminder.kind == .daily { await analytics.record(.notificationShown(.dailyReminder)) }
    }

    public func reminderOpened(_ reminder: Reminder) async {
        if reminder.kind == .daily { await analytics.record(.notificationOpened(.dailyReminder)) }
    }

    /// The notification due at `now`, from the saved score and this device's scans. The streak
    /// at risk is the one still alive at `now`: a saved score may be days old.
    public func reminder(at now: Date) throws -> Reminder? {
        let zone = configuration.timeZone
        let saved = try cache.peek("recycling.score", as: Score.self)
        let today = Streak.day(of: now, in: zone)
        var daysWithPoints = try scans.daysWithPoints(in: zone)
        var savedStreak: Streak.Saved?
        if let saved {
            let savedDay = Streak.day(of: Date(timeIntervalSince1970: Double(saved.fetchedAt) / 1000), in: zone)
            savedStreak = Streak.Saved(day: savedDay, streak: saved.value.streak, pointsThatDay: saved.value.today)
            for day in saved.value.days where day.points > 0 { Streak.day(of: day.day).map { _ = daysWithPoints.insert($0) } }
            if saved.value.today > 0 { daysWithPoints.insert(savedDay) }
        }
        let streak = Streak.endingYesterday(today: today, daysWithPoints: daysWithPoints, saved: savedStreak)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let savedToday = savedStreak?.day == today ? saved?.value.today ?? 0 : 0
        let pointsToday = max(savedToday, try scans.points(since: UnixMillis.milliseconds(calendar.startOfDay(for: now))))
        return Reminder.due(at: now, timeZone: zone, streak: streak, pointsToday: pointsToday)
    }

    // MARK: - Sync

    /// Online or offline, what waits and why.
    public func status() async throws -> RecyclingStatus {
        try status(of: try await deviceStatus())
    }

    /// The device's status, online or offline as the server answers within the local budget.
    public func deviceStatus() async throws -> DeviceStatus {
        try await device.status(connectivity: await reachable(within: configuration.localCommandSyncBudget))
    }

    /// What SustainU adds to the device's `status`: scans waiting, the saved catalogues.
    public func status(of device: DeviceStatus) throws -> RecyclingStatus {
        RecyclingStatus(device: device, waitingScans: try scans.all().filter { $0.state == .waiting }.count,
                        pointsSavedAt: try points.meta()?.fetchedAt, packagingEntries: try packaging.count())
    }

    /// Sends what waits (scans, visits), then refreshes the points and the packaging catalogue.
    public func sync() async throws -> SyncReport {
        // NB: a whole round, pull included: the engine pulls nothing for an app without synced
        // collections, but only a whole round is recorded as the last sync that `status` shows.
        let report = await device.sync()
        if report.failure == nil { try await refreshCatalogues() }
        return report
    }

    /// Loads the points, the packaging catalogue and the tips for offline use.
    func refreshCatalogues() async throws {
        try await points.refresh()
        try await packaging.refresh()
        _ = try await tips(patient: true)
    }

    /// Sends a scan or visit the server refused again, now if the server answers at once (a scan
    /// then waits for its classification as `scan` does), else with the next sync.
    public func retry(_ id: String) async throws -> (line: OutboxLine, outcome: RetryOutcome) {
        let scanBudget = configuration.scanBudget
        return try await device.retry(id) { entry in entry.operation == ScanCalls.scan ? scanBudget : nil }
    }

    /// Gives up on a scan or visit the server refused: the scan (and its photo) or the visit's
    /// count leaves this device too.
    public func discard(_ id: String) async throws -> OutboxLine {
        let photos = configuration.photosDirectory(session.userID), attachments = device.attachments.folder
        return try await device.discard(id) { [store] entry in
            let scan = entry.operation == ScanCalls.scan ? try? JSONDecoder().decode(ScanCall.self, from: entry.payload) : nil
            try await store.write { tx in
                if let scan {
                    try tx.db.execute(sql: "DELETE FROM scans WHERE id = ?", arguments: [scan.scanId])
                } else if entry.operation == ScanCalls.visit, let call = try? JSONDecoder().decode(VisitCall.self, from: entry.payload) {
                    try tx.db.execute(sql: "UPDATE recycling_points SET visits = MAX(0, visits - 1) WHERE id = ?", arguments: [call.pointId])
                }
            }
            if let file = scan?.photoFile { try? FileManager.default.removeItem(at: photos.appendingPathComponent(file)) }
            // NB: a dropped scan's photo goes too, once no upload of it waits (an upload already
            // sent is collected by the server after its grace period: no record refers to it).
            // NB: a photo whose upload was refused (and so the scan) goes with the scan.
            if let reference = scan?.photoAttachment.flatMap(AttachmentReference.init(parsing:)),
               (try? await store.write({ tx in
                   try tx.dropRefusedUploads(of: reference)
                   return try tx.forgetAttachment(reference)
               })) == true {
                try? FileManager.default.removeItem(at: attachments.appendingPathComponent(reference.sha256))
            }
        }
    }

    /// When scans or visits wait, sends them if the server answers at once (and waits at most
    /// `catchUpBudget` for them), so that a command started after the network returned can
    /// announce what was classified meanwhile.
    public func catchUp() async {
        guard ((try? outbox.counts().pending) ?? 0) > 0,
              await reachable(within: configuration.localCommandSyncBudget) == .online else { return }
        await device.sync(.atMost(configuration.catchUpBudget), pull: false)
    }

    /// Sends what a command just queued, waiting at most the local budget.
    func sendQueued() async {
        guard !foundOffline else { return }
        await device.sync(.localBudget, pull: false)
    }

    /// False once the server said it cannot classify photos (until it classifies one): then a
    /// photo is no way to learn more of an item.
    public func serverClassifiesPhotos() -> Bool {
        !((try? store.reader.read { db in try ScanCalls.photosUnclassified(db) }) ?? false)
    }

    /// How far this device's clock is ahead of the server's (negative: behind), in seconds, when it
    /// is off by more than a few seconds, as an answer in this process or a recent one told it.
    public func clockAheadBySeconds() -> Int64? {
        device.clock.deviceAheadBySeconds()
    }

    // MARK: -

    /// Whether the server answers, waiting at most `budget` (and not at all when this process
    /// already found it silent or unreachable: the engine's connectivity remembers).
    private func reachable(within budget: Duration) async -> Connectivity {
        await device.connectivity.checkOnce(within: budget)
    }

    /// True once this process found the server silent or unreachable (until it answers again).
    private var foundOffline: Bool { device.connectivity.foundOffline }

    /// True when the server accepted the connection but did not answer (not "no internet").
    public var serverSilent: Bool { device.connectivity.foundSilent }

    /// Revalidates the saved points, waiting the local budget when there is a copy to fall back
    /// on and the refresh budget when there is none; false when the server could not be asked.
    @discardableResult
    private func refreshPoints() async -> Bool {
        let hasCopy = (try? points.meta()) != nil
        if hasCopy && foundOffline { return false }
        do {
            _ = try await withTimeLimit(hasCopy ? configuration.localCommandSyncBudget : configuration.refreshBudget) {
                try await self.points.refresh()
            }
            return true
        } catch {
            return false
        }
    }

    private func cachedRead<Value: Codable & Sendable>(
        _ key: String, what: String, patient: Bool = false, fetch: @escaping @Sendable (String?) async throws -> FetchOutcome
    ) async throws -> Cached<Value> {
        // NB: with a saved copy the network gets the local budget, not more: a silent server must
        // not hold a read up; without one, the read needs the network and waits for it a while.
        let saved = try? cache.peek(key, as: Value.self)
        let hasCopy = saved != nil
        // NB: one wait per command: a server this process found silent is not waited for again.
        if let saved, foundOffline, !patient { return saved }
        let timeout = hasCopy && !patient ? configuration.localCommandSyncBudget : configuration.refreshBudget
        let guarded: @Sendable (String?) async throws -> FetchOutcome = { etag in
            do {
                return try await fetch(etag)
            } catch {
                // NB: never the generated client's own error, which holds the operation's input.
                throw RemoteFailure.from(error)
            }
        }
        do {
            return try await cache.read(key, as: Value.self, policy: .networkFirst(timeout: timeout), fetch: guarded)
        } catch let error as CacheError {
            if case .needsConnectionForFirstLoad(_, let reason) = error { throw RecyclingError.needsConnection(what: what, reason: reason) }
            throw error
        }
    }
}

extension UserRecycling {
    /// The time zone days and reminders are counted in.
    public var configurationTimeZone: TimeZone { configuration.timeZone }
}
