import Observation

/// A feature store that keeps its data fresh over time through a `LiveLink`: what it does with a server event,
/// and whether its data is stale. Every store starts, stops, pauses and resumes the same way (below).
@MainActor
public protocol LiveStore: AnyObject {
    var isOffline: Bool { get }
    func apply(_ event: ServerEvent) async
    /// Its link to the server, made in its init.
    var link: LiveLink? { get }
}

extension LiveStore {
    /// Whether live updates are connected (the refresher is then only a safety net).
    public var isLive: Bool { link?.isLive ?? false }

    /// Starts refreshing (at once, then on the interval) and listening to live updates.
    public func start(live: Bool = true) async { await link?.start(live: live, for: self) }

    public func stop() async { await link?.stop() }

    /// The app went to the background: stop polling, and let go of the live connection.
    public func pause() async { await link?.pause() }

    /// The app is active again: refresh at once, resume polling and live updates.
    public func resume() async { await link?.resume() }

    /// Refreshes now; joins a refresh already running. True when it reached the server.
    @discardableResult
    public func refresh() async -> Bool { await link?.refresher.refreshNow() ?? false }

    /// Sets how often to poll (at least 5 s).
    public func setInterval(_ interval: Duration) async { await link?.refresher.setInterval(interval) }
}

/// A feature store's link to the server over time: its `Refresher` (polling) and its share of the session's
/// live event stream. Every store starts, stops, pauses and resumes the same way; this is that way, once, so
/// the stores keep only what differs (what they fetch and what an event changes).
///
/// The live connection is shared by the session's stores (`EventStreamClient.hold`/`release` count holders):
/// a link holds it at most once, lets go of it in the background and holds it again on resume if the app
/// asked for live updates. Observable, so a store's `isLive` (read through here) updates views.
@MainActor
@Observable
public final class LiveLink {
    /// Whether live updates are connected (the refresher is then only a safety net).
    private(set) var isLive = false

    let refresher: Refresher
    @ObservationIgnored private let events: EventStreamClient
    @ObservationIgnored private var listeners: [Task<Void, Never>] = []
    /// Whether the app asked for live updates, and whether this link holds the connection now.
    @ObservationIgnored private var wantsLive = false
    @ObservationIgnored private var holdsLive = false

    /// `fetch` does one refresh of the store's data and throws when it failed.
    init(session: KitSession, fetch: @escaping @Sendable () async throws -> Void) {
        events = session.events
        refresher = Refresher(settings: session.refresh, clock: session.clock, action: fetch)
    }

    /// Starts refreshing (at once, then on the interval) and, when `live`, passing the session's events to
    /// `store`.
    func start(live: Bool, for store: some LiveStore) async {
        await refresher.start()
        guard live else { return }
        wantsLive = true
        guard listeners.isEmpty else {
            await holdLive()
            return
        }
        let stream = await events.events()
        let statuses = await events.statusUpdates()
        listeners.append(
            Task { [weak store] in
                for await event in stream { await store?.apply(event) }
            })
        listeners.append(
            Task { [weak self, weak store] in
                for await status in statuses {
                    await self?.setLive(status == .connected, for: store)
                }
            })
        await holdLive()
    }

    private func holdLive() async {
        guard !holdsLive else { return }
        holdsLive = true
        await events.hold()
    }

    private func releaseLive() async {
        guard holdsLive else { return }
        holdsLive = false
        await events.release()
    }

    func stop() async {
        await refresher.stop()
        for listener in listeners { listener.cancel() }
        listeners = []
        wantsLive = false
        await releaseLive()
        isLive = false
    }

    /// The app went to the background: stop polling, and let go of the live connection.
    func pause() async {
        await refresher.pause()
        await releaseLive()
    }

    /// The app is active again: refresh at once, resume polling and live updates.
    func resume() async {
        await refresher.resume()
        if wantsLive { await holdLive() }
    }

    private func setLive<Store: LiveStore>(_ live: Bool, for store: Store?) async {
        isLive = live
        await refresher.setLive(live)
        // The live stream is back while the data is stale: the server is reachable again, refresh now rather
        // than wait out the offline backoff.
        if live, store?.isOffline == true { await refresher.refreshAfterChange() }
    }
}
