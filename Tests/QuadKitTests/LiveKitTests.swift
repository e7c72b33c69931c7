import Foundation
import Observation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The kit against a real Quad on a free port: URLSession, middleware, SSE and disk, end to end.
@Suite("QuadKit against a real server", .serialized)
struct LiveKitTests {
    @MainActor
    func makeStore(
        _ server: LiveServer, as username: String?, offline: URL? = nil, clock: ManualClock? = nil
    )
        async throws -> RoomsStore
    {
        var options = QuadClient.Options.forTests
        // The device's clock reads the server's (which bookings are held now depends on it).
        options.clock = clock ?? ManualClock(now: server.clock.now)
        options.retry = RetryMiddleware(maxAttempts: 3, clock: InstantClock())
        let client = try await server.client(as: username, options: options)
        let session = KitSession(
            client: client, offline: OfflineStore(directory: offline ?? temporaryDirectory()),
            refresh: .init(interval: .seconds(30)))
        return RoomsStore(session: session)
    }

    @Test("RoomsStore: sorted rooms, availability, booking, repeat taps, full rooms, cancelling, coalesced refresh")
    @MainActor
    func roomsStore() async throws {
        try await LiveServer.with { server in
            let store = try await makeStore(server, as: "ada")
            #expect(store.rooms.isEmpty && store.lastUpdated == nil)
            // The store is observable: a view reading `rooms` hears that they changed.
            let observed = Flag()
            withObservationTracking {
                _ = store.rooms
            } onChange: {
                observed.set()
            }
            #expect(await store.refresh())
            #expect(observed.isSet)
            #expect(store.rooms.count == 8)
            #expect(store.rooms == Room.sortedForBooking(store.rooms))
            #expect(store.rooms.first?.id == "helmold")
            #expect(store.rooms.last?.id == "alexis")
            #expect(store.rooms.first { $0.id == "alexis" }?.availability == .full)
            #expect(store.rooms.first { $0.id == "mostafa" }?.availability == .bookable)
            #expect(store.rooms.first { $0.id == "ljerka" }?.availability == .bookable)
            #expect(store.lastUpdated != nil && !store.isOffline)
            #expect(store.rooms(minSpots: 40, building: "north hall").map(\.id) == ["ljerka"])

            // Two taps at once: one booking.
            #expect(store.canBook("mostafa"))
            async let first = store.book("mostafa")
            async let second = store.book("mostafa")
            let states = await [first, second]
            guard case .booked(let bookingId) = store.state(of: "mostafa") else {
                Issue.record("not booked: \(states)")
                return
            }
            #expect(store.rooms.first { $0.id == "mostafa" }?.spots == 3)
            #expect(store.rooms.first { $0.id == "mostafa" }?.availability == .runningLow)
            #expect(!store.canBook("mostafa"))
            let mine = try await store.session.client.myBookings()
            #expect(mine.map(\.roomId) == ["mostafa"])
            #expect(mine.first?.id == bookingId)
            // A tap on a booked room is ignored.
            #expect(await store.book("mostafa") == .booked(bookingId: bookingId))
            #expect(try await store.session.client.myBookings().count == 1)

            // A full room fails with the server's reason.
            #expect(!store.canBook("alexis"))
            guard case .failed(let reason) = await store.book("alexis") else {
                Issue.record("booking a full room did not fail")
                return
            }
            #expect(!reason.isEmpty)

            // Another store (a relaunch) sees the booking from the server.
            let again = try await makeStore(server, as: "ada")
            #expect(await again.refresh())
            #expect(again.state(of: "mostafa") == .booked(bookingId: bookingId))

            try await store.cancel("mostafa")
            #expect(store.state(of: "mostafa") == .idle)
            #expect(store.rooms.first { $0.id == "mostafa" }?.spots == 4)
            #expect(try await store.session.client.myBookings().isEmpty)

            // Concurrent refreshes make one request.
            let before = await store.refreshCount
            async let r1 = store.refresh()
            async let r2 = store.refresh()
            async let r3 = store.refresh()
            #expect(await [r1, r2, r3] == [true, true, true])
            #expect(await store.refreshCount - before == 1)
        }
    }

    @Test("RoomsStore in time: a series booked, listed soonest first, checked in, the rest cancelled")
    @MainActor
    func roomsStoreInTime() async throws {
        // A Tuesday, 09:50 on the demo campus (Melbourne); the store's clock reads the server's.
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await LiveServer.with(at: tuesday) { server in
            let store = try await makeStore(server, as: "ada")
            #expect(await store.refresh())
            let campus = CampusClock(timeZone: TestTime.melbourne)
            let day = campus.date(of: tuesday)
            let outcomes = try await store.book(
                "mina",
                TimedBooking(
                    start: campus.instant(day, LocalTime(hour: 10)), minutes: 60,
                    repeats: (.weekly, day.adding(days: 14))))
            #expect(outcomes.map(\.result) == [.booked, .booked, .booked])
            #expect(
                store.bookings.compactMap(\.start)
                    == (0...2).map { campus.instant(day.adding(days: 7 * $0), LocalTime(hour: 10)) })
            // Not held yet at 09:50: the room does not show as booked by Ada, but the first date can be checked in.
            #expect(store.state(of: "mina") == .idle)
            let first = try #require(store.bookings.first)
            #expect(first.canCheckIn(at: server.clock.now))
            try await store.checkIn(first)
            #expect(store.bookings.first?.checkedIn == true)
            try await store.cancel(store.bookings[1], following: true)
            #expect(store.bookings.map(\.id) == [first.id])
            // A rule broken is the server's words.
            await #expect(throws: KitError.self) {
                try await store.book(
                    "mina", TimedBooking(start: campus.instant(day, LocalTime(hour: 10, minute: 10)), minutes: 30))
            }
        }
    }

    @Test("A booking nobody checked in is released by the server at its deadline, and the event stream says so")
    @MainActor
    func releaseReachesTheEventStream() async throws {
        // A Tuesday, 09:50 on the demo campus; Library Wing (Mina) asks for a check-in within 10 minutes.
        let tuesday = TestTime.next(LocalTime(hour: 9, minute: 50), where: { $0.weekday == 2 })
        try await LiveServer.with(at: tuesday) { server in
            var request = URLRequest(url: server.url.appendingPathComponent("/api/buildings/Library Wing"))
            request.httpMethod = "PUT"
            request.setValue("Bearer \(LiveServer.adminToken)", forHTTPHeaderField: "Authorization")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(
                #"{"hours": "Mon-Sun 00:00-24:00", "horizonDays": 56, "maxMinutes": 240, "checkInMinutes": 10}"#.utf8)
            let (_, answer) = try await URLSession.shared.data(for: request)
            #expect((answer as? HTTPURLResponse)?.statusCode == 200)

            let campus = CampusClock(timeZone: TestTime.melbourne)
            let grace = try await server.client(as: "grace")
            let booked = try await grace.book(
                roomId: "mina",
                TimedBooking(start: campus.instant(campus.date(of: tuesday), LocalTime(hour: 10)), minutes: 60),
                idempotencyKey: UUID().uuidString)
            #expect(
                booked.booking.checkInBy == campus.instant(campus.date(of: tuesday), LocalTime(hour: 10, minute: 10)))

            let store = try await makeStore(server, as: "ada")
            await store.start()
            try await eventually("live updates connect") { store.isLive && store.lastUpdated != nil }
            #expect(store.rooms.first { $0.id == "mina" }?.spots == 39)
            // 10:00: Grace's seat is held (the quarter hour is announced); 10:10: released, nobody checked it in.
            server.clock.advance(
                by: .seconds(
                    campus.instant(campus.date(of: tuesday), LocalTime(hour: 10)).timeIntervalSince(server.clock.now)))
            try await eventually("the booking's start is announced") {
                store.rooms.first { $0.id == "mina" }?.spots == 38
            }
            server.clock.advance(by: .seconds(600))
            try await eventually("the release is announced") { store.rooms.first { $0.id == "mina" }?.spots == 39 }
            #expect(try await grace.myBookings().isEmpty)
            await store.stop()
        }
    }

    @Test("Live updates: another person's booking reaches the store without a refresh")
    @MainActor
    func liveUpdates() async throws {
        try await LiveServer.with { server in
            let store = try await makeStore(server, as: "ada")
            await store.start()
            try await eventually("live updates connect") { store.isLive && store.lastUpdated != nil }
            // Connected, the refresher only polls as a safety net: 300 s ± 10 %, not the 30 s interval.
            let clock = try #require(store.session.clock as? ManualClock)
            try await eventually("the refresher waits on the safety net") {
                (clock.sleeps.last.map { $0 >= .seconds(270) && $0 <= .seconds(330) }) == true
            }
            let before = await store.refreshCount
            let grace = try await server.client(as: "grace")
            _ = try await grace.book(roomId: "ljerka", idempotencyKey: UUID().uuidString)
            try await eventually("the event arrives") { store.rooms.first { $0.id == "ljerka" }?.spots == 42 }
            #expect(await store.refreshCount == before)
            await store.stop()
        }
    }

    @Test("Offline: cached data at start, isOffline, booking refused and not queued, then recovery")
    @MainActor
    func offline() async throws {
        let folder = temporaryDirectory()
        var server = try await LiveServer.start()
        let clock = ManualClock()
        let first = try await makeStore(server, as: "ada", offline: folder, clock: clock)
        #expect(await first.refresh())
        let fetchedAt = try #require(first.lastUpdated)
        await server.stop()

        // The app relaunches without a server: the rooms are there at once, dated.
        clock.advance(by: .seconds(600))
        let store = try await makeStore(server, as: nil, offline: folder, clock: clock)
        store.session.client.tokens.token = first.session.client.tokens.token
        #expect(store.rooms.count == 8)
        #expect(store.lastUpdated == fetchedAt)
        #expect(store.age == 600)
        #expect(await store.refresh() == false)
        #expect(store.isOffline)
        #expect(store.rooms.count == 8)
        #expect(!store.canBook("ljerka"))
        guard case .failed(let reason) = await store.book("ljerka") else {
            Issue.record("booking offline was not refused")
            return
        }
        #expect(reason.contains("offline"))
        await #expect(throws: KitError.self) { _ = try await store.session.client.rooms() }

        server = try await server.restart()
        #expect(await store.refresh())
        #expect(!store.isOffline)
        #expect(store.lastUpdated == clock.now)
        // Nothing was queued: the refused booking never happened.
        #expect(try await store.session.client.myBookings().isEmpty)
        #expect(store.rooms.first { $0.id == "ljerka" }?.spots == 43)
        #expect(await store.book("ljerka") == store.state(of: "ljerka"))
        guard case .booked = store.state(of: "ljerka") else {
            Issue.record("booking after recovery failed: \(store.state(of: "ljerka"))")
            return
        }
        await server.stop()
    }

    @Test("SSE: after a dropped connection, the client resumes with Last-Event-ID and loses nothing")
    func sseResume() async throws {
        try await LiveServer.with { server in
            let clock = ManualClock()
            let events = EventStreamClient(
                serverURL: server.url, types: [.room], clock: clock, backoff: Backoff(base: .seconds(1)))
            let stream = await events.events()
            let received = Received()
            let listener = Task { for await event in stream { received.add(event) } }
            await events.start()
            try await eventually("connected") { await events.status == .connected }

            let grace = try await server.client(as: "grace")
            _ = try await grace.book(roomId: "ljerka", idempotencyKey: UUID().uuidString)
            try await eventually("the first event") { received.all.count == 1 }

            await events.dropConnection()
            try await clock.waitForSleepers()
            #expect(await events.status == .disconnected)
            // Published while the client is away.
            let ada = try await server.client(as: "ada")
            _ = try await ada.book(roomId: "painter", idempotencyKey: UUID().uuidString)
            clock.advance(by: .seconds(60))
            try await eventually("the missed event after reconnecting") { received.all.count == 2 }
            #expect(await events.connections == 2)

            let all = received.all
            #expect(all.map(\.type) == ["room", "room"])
            #expect(all[1].data.contains("painter"))
            #expect(all[1].decode(RoomEvent.self)?.spots == 15)
            let ids = all.compactMap { $0.id.flatMap(Int64.init) }
            #expect(ids.count == 2 && ids[0] < ids[1])
            #expect(await events.lastEventId == all[1].id)
            await events.stop()
            listener.cancel()
        }
    }

    @Test("ETag: the second read sends If-None-Match, gets a 304 and is served from the cache")
    func revalidation() async throws {
        try await LiveServer.with { server in
            let recorder = Recorder()
            var options = QuadClient.Options.forTests
            options.extraMiddlewares = [recorder]
            let client = try await server.client(options: options)
            let first = try await client.rooms()
            #expect(!first.revalidated)
            let second = try await client.rooms()
            #expect(second.revalidated)
            #expect(second.value == first.value)
            let rooms = recorder.exchanges.filter { $0.operationID == "listRooms" }
            #expect(rooms.map(\.status) == [200, 304])
            #expect(rooms[1].ifNoneMatch == first.etag)

            // A change makes the next read a fresh 200.
            let ada = try await server.client(as: "ada")
            _ = try await ada.book(roomId: "yana", idempotencyKey: UUID().uuidString)
            let third = try await client.rooms()
            #expect(!third.revalidated)
            #expect(third.value.first { $0.id == "yana" }?.spots == 33)

            // With a cache folder the ETags outlive the process: a relaunched app revalidates what it had
            // (one 304, nothing downloaded again); without one it starts cold.
            var persistent = QuadClient.Options.forTests
            persistent.cacheDirectory = temporaryDirectory()
            let before = try await server.client(options: persistent).rooms()
            #expect(!before.revalidated)
            let relaunchRecorder = Recorder()
            var relaunched = persistent
            relaunched.extraMiddlewares = [relaunchRecorder]
            let after = try await server.client(options: relaunched).rooms()
            #expect(after.revalidated && after.value == before.value && after.etag == before.etag)
            #expect(relaunchRecorder.exchanges.map(\.status) == [304])
            #expect(relaunchRecorder.exchanges.first?.ifNoneMatch == before.etag)
            let coldRecorder = Recorder()
            var cold = QuadClient.Options.forTests
            cold.extraMiddlewares = [coldRecorder]
            #expect(try await !server.client(options: cold).rooms().revalidated)
            #expect(coldRecorder.exchanges.map(\.status) == [200] && coldRecorder.exchanges[0].ifNoneMatch == nil)
        }
    }

    @Test("A retry after a lost answer repeats the Idempotency-Key and books once")
    func idempotentRetry() async throws {
        try await LiveServer.with { server in
            let recorder = Recorder()
            var options = QuadClient.Options.forTests
            options.extraMiddlewares = [LoseAnswers("bookRoom"), recorder]
            let client = try await server.client(as: "ada", options: options)
            let (booking, spots) = try await client.book(roomId: "septima", idempotencyKey: "intent-42")
            #expect(spots == 83)
            let attempts = recorder.exchanges.filter { $0.operationID == "bookRoom" }
            #expect(attempts.count == 2)
            #expect(attempts.map(\.idempotencyKey) == ["intent-42", "intent-42"])
            #expect(attempts.map(\.status) == [201, 201])
            let mine = try await client.myBookings()
            #expect(mine.map(\.id) == [booking.id])
            #expect(try await client.rooms().value.first { $0.id == "septima" }?.spots == 83)
        }
    }

    @Test("Images: concurrent requests share one download; memory and disk evict the least recently used")
    func imageCache() async throws {
        try await LiveServer.with { server in
            let client = try await server.client()
            let urls = try await client.rooms().value.prefix(3).compactMap { $0.thumbnail.flatMap { URL(string: $0) } }
            #expect(urls.count == 3)
            let counter = DownloadCounter()
            let shared = ImageCache(directory: temporaryDirectory()) { url in
                counter.add()
                return try await client.download(url)
            }
            let results = try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<8 { group.addTask { try await shared.image(urls[0]) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 8 && Set(results).count == 1 && !results[0].isEmpty)
            #expect(counter.count == 1)
            #expect(await shared.downloads == 1)

            let sizes = try await urls.asyncMap { try await client.download($0).count }
            let limit = sizes.reduce(0, +) - 1
            let folder = temporaryDirectory()
            let cache = ImageCache(
                directory: folder, limits: .init(memoryBytes: limit, diskBytes: limit), clock: ManualClock()
            ) { try await client.download($0) }
            _ = try await cache.image(urls[0])
            _ = try await cache.image(urls[1])
            _ = try await cache.image(urls[0])  // used again: now urls[1] is the least recently used
            _ = try await cache.image(urls[2])
            let inMemory = await urls.asyncMap { await cache.isInMemory($0) }
            let onDisk = await urls.asyncMap { await cache.isOnDisk($0) }
            #expect(inMemory == [true, false, true])
            #expect(onDisk == [true, false, true])
            let (diskBytes, memoryBytes) = (await cache.diskBytes, await cache.memoryBytes)
            #expect(diskBytes <= limit && memoryBytes <= limit)
            #expect(await cache.downloads == 3)

            // From disk after memory is dropped (no download), and the index survives a new cache.
            await cache.clearMemory()
            _ = try await cache.image(urls[0])
            #expect(await cache.downloads == 3)
            let reopened = ImageCache(directory: folder, limits: .init(memoryBytes: limit, diskBytes: limit)) { _ in
                throw KitError.offline("no network in this test")
            }
            #expect(try await reopened.image(urls[2]).count == sizes[2])
            await #expect(throws: KitError.self) { _ = try await reopened.image(urls[1]) }
        }
    }
}

extension LiveKitTests {
    @Test("Pause lets go of the live connection and stops polling; resume refreshes at once and reconnects")
    @MainActor
    func pauseAndResume() async throws {
        try await LiveServer.with { server in
            let clock = ManualClock()
            let store = try await makeStore(server, as: "ada", clock: clock)
            let specials = SpecialsStore(session: store.session)
            await store.start()
            await specials.start()
            try await eventually("live") { store.isLive && specials.isLive }
            #expect(await store.session.events.holders == 2)

            // One screen stopping leaves the other's live updates alone.
            await specials.stop()
            #expect(await store.session.events.holders == 1)
            #expect(await store.session.events.status == .connected)
            let grace = try await server.client(as: "grace")
            _ = try await grace.book(roomId: "mina", idempotencyKey: UUID().uuidString)
            try await eventually("the event still arrives") { store.rooms.first { $0.id == "mina" }?.spots == 38 }

            // In the background: no connection, no polling, so a change is not seen...
            await store.pause()
            try await eventually("disconnected") {
                await store.session.events.status == .disconnected && !store.isLive
            }
            let refreshes = await store.refreshCount
            // Nothing waits on the store's clock: moving it past any refresh interval can wake nothing.
            try await eventually("no refresh is scheduled") { clock.sleeperCount == 0 }
            _ = try await grace.book(roomId: "yana", idempotencyKey: UUID().uuidString)
            clock.advance(by: .seconds(600))
            #expect(clock.sleeperCount == 0)
            #expect(store.rooms.first { $0.id == "yana" }?.spots == 34)
            #expect(await store.refreshCount == refreshes)

            // ...until the app is active again: an immediate refresh, and live updates back.
            await store.resume()
            try await eventually("the refresh on resume") { store.rooms.first { $0.id == "yana" }?.spots == 33 }
            try await eventually("live again") { store.isLive }
            _ = try await grace.book(roomId: "painter", idempotencyKey: UUID().uuidString)
            try await eventually("events flow again") { store.rooms.first { $0.id == "painter" }?.spots == 15 }
            await store.stop()
            #expect(await store.session.events.holders == 0)
        }
    }

    @Test("The app sets the polling interval (never under 5 s); time is the injected clock's")
    @MainActor
    func interval() async throws {
        try await LiveServer.with { server in
            let clock = ManualClock()
            let store = try await makeStore(server, as: nil, clock: clock)
            await store.start(live: false)
            try await clock.waitForSleepers()
            #expect(await store.refreshCount == 1)
            // 30 s ± 10 %, as the session says.
            #expect(clock.sleeps.last.map { $0 >= .seconds(27) && $0 <= .seconds(33) } == true)
            await store.setInterval(.seconds(2))
            try await eventually("the new wait") { clock.sleeps.last.map { $0 <= .seconds(5.5) } == true }
            // 2 s is under the floor: 5 s ± 10 %.
            #expect(clock.sleeps.last.map { $0 >= .seconds(4.5) } == true)
            let grace = try await server.client(as: "grace")
            _ = try await grace.book(roomId: "mina", idempotencyKey: UUID().uuidString)
            clock.advance(by: .seconds(5.5))
            try await eventually("the poll sees the change") { store.rooms.first { $0.id == "mina" }?.spots == 38 }
            #expect(await store.refreshCount == 2)
            await store.stop()
        }
    }

    @Test("After an outage the store comes back online by itself (live stream reconnects, data refreshed)")
    @MainActor
    func recoversByItself() async throws {
        var server = try await LiveServer.start()
        do {
            let clock = ManualClock()
            let store = try await makeStore(server, as: "ada", clock: clock)
            await store.start()
            try await eventually("live") { store.isLive && store.lastUpdated != nil }
            await server.stop()
            try await eventually("the stream dropped") { !store.isLive }
            #expect(await store.refresh() == false)
            #expect(store.isOffline && !store.canBook("ljerka"))

            server = try await server.restart()
            let grace = try await server.client(as: "grace")
            _ = try await grace.book(roomId: "ljerka", idempotencyKey: UUID().uuidString)
            // No pull to refresh: the waits run on the injected clock, moved along until the store is back.
            try await eventually("online again", timeout: .seconds(30)) {
                clock.advance(by: .seconds(60))
                return !store.isOffline && store.isLive
            }
            #expect(store.rooms.first { $0.id == "ljerka" }?.spots == 42)
            #expect(store.canBook("ljerka"))
            await store.stop()
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("A 429 from the server's rate limiter is retried after the Retry-After it sends, then served")
    func retryAfterFromServer() async throws {
        let server = try await LiveServer.start { configuration in
            configuration.rateLimit = 2
            configuration.rateBurst = 1
        }
        do {
            let recorder = Recorder()
            let clock = SleepingClock()
            var options = QuadClient.Options.forTests
            // No jitter draw: a backoff alone would wait 0 s, so any wait is the server's Retry-After.
            options.retry = RetryMiddleware(maxAttempts: 3, clock: clock, random: { 0 })
            options.extraMiddlewares = [recorder]
            let client = QuadClient(serverURL: server.url, options: options)
            let first = try await client.rooms()
            let second = try await client.rooms()
            #expect(second.value == first.value && second.revalidated)
            #expect(recorder.exchanges.map(\.status) == [200, 429, 304])
            #expect(clock.sleeps == [.seconds(1)])
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("SSE: reconnects with exponential backoff while the server is away, and from the start once back")
    func sseBackoff() async throws {
        var server = try await LiveServer.start()
        do {
            let clock = ManualClock()
            let events = EventStreamClient(
                serverURL: server.url, types: [.room], clock: clock,
                backoff: Backoff(base: .seconds(1), cap: .seconds(8)), random: { 1 })
            await events.start()
            try await eventually("connected") { await events.status == .connected }
            await server.stop()
            // The first wait is the server's `retry:` advice (2 s, more than the backoff's first 1 s); then each
            // failed attempt doubles the wait (the jitter draw is fixed at its top), up to the cap.
            for expected in [2, 2, 4, 8, 8] {
                try await clock.waitForSleepers()
                #expect(clock.sleeps.last == .seconds(expected))
                clock.advance(by: .seconds(expected))
            }
            try await clock.waitForSleepers()
            server = try await server.restart()
            clock.advance(by: .seconds(8))
            try await eventually("connected again") { await events.status == .connected }
            // A working stream resets the backoff: the next drop waits the first step (the advice) again.
            let sleeps = clock.sleeps.count
            await events.dropConnection()
            try await clock.waitForSleepers()
            #expect(clock.sleeps.count == sleeps + 1 && clock.sleeps.last == .seconds(2))
            await events.stop()
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}

/// A clock running at the real rate from the tests' instant, recording the sleeps asked of it.
final class SleepingClock: KitClock, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Duration] = []
    private let base = TestTime.clock()
    var now: Date { base.now }
    var sleeps: [Duration] { lock.withLock { recorded } }
    func sleep(for duration: Duration) async throws {
        lock.withLock { recorded.append(duration) }
        try await base.sleep(for: duration)
    }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

final class Received: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [ServerEvent] = []
    func add(_ event: ServerEvent) { lock.withLock { events.append(event) } }
    var all: [ServerEvent] { lock.withLock { events } }
}

final class DownloadCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
