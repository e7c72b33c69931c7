import Foundation

/// What every feature store shares: one client (one token, one ETag cache), one offline store, one live
/// event stream, one clock. An app makes one session per server and asks it for the stores it shows.
///
/// Extension point: a feature store (SpecialsStore, LibraryStore, TimetableStore) takes a `KitSession`,
/// keeps its resource with `OfflineStore` under its own key, refreshes with a `Refresher`, listens to its
/// event types through `events`, and refuses writes while `isOffline` with `KitError.writeRefusedOffline`.
public final class KitSession: Sendable {
    public let client: QuadClient
    public let offline: OfflineStore?
    public let events: EventStreamClient
    public let clock: any KitClock
    public let refresh: Refresher.Settings

    public init(
        client: QuadClient, offline: OfflineStore?, refresh: Refresher.Settings = .init(),
        eventBackoff: Backoff = Backoff(base: .milliseconds(500), cap: .seconds(30))
    ) {
        self.client = client
        self.offline = offline
        self.clock = client.clock
        self.refresh = refresh
        self.events = EventStreamClient(
            serverURL: client.serverURL, tokens: client.tokens, clock: client.clock, backoff: eventBackoff)
    }

    /// The offline keys of data that belongs to the signed-in person (their bookings, their timetable).
    /// (`RoomsStore`'s "my-bookings" and every `TimetableStore` day, "timetable…").
    public static let personalKeys = ["my-bookings", "timetable"]

    /// Signs out, then forgets what belonged to the person: their cached bookings and timetable, and every
    /// response the ETag cache kept (some were theirs). Public data (rooms, specials, books) stays for offline
    /// use. The cache is cleared even when the server cannot be told.
    public func signOut() async throws {
        defer { client.tokens.token = nil }
        do {
            try await client.signOut()
        } catch {
            await forgetPersonalData()
            throw error
        }
        await forgetPersonalData()
    }

    public func forgetPersonalData() async {
        await Self.forgetPersonalData(client: client, offline: offline)
    }

    public static func forgetPersonalData(client: QuadClient, offline: OfflineStore?) async {
        for key in personalKeys { offline?.remove(prefix: key) }
        await client.etags.removeAll()
    }

    /// A session for `serverURL` with the default cache folder: the offline store and, beside it, the ETag
    /// cache, so a relaunch revalidates what it shows (a 304) rather than downloading it again.
    public convenience init(serverURL: URL, token: String? = nil, refresh: Refresher.Settings = .init()) {
        let offline = OfflineStore(directory: OfflineStore.defaultDirectory(server: serverURL))
        var options = QuadClient.Options()
        options.cacheDirectory = offline.httpCacheDirectory
        self.init(
            client: QuadClient(serverURL: serverURL, token: token, options: options), offline: offline, refresh: refresh
        )
    }
}
