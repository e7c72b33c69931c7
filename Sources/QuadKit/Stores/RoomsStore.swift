import Foundation
import Observation
import QuadCore

/// The single source of truth for the rooms screen: rooms in booking order with their availability, the
/// signed-in person's bookings, and one booking state machine per room
/// (idle → booking → booked | failed(reason)), which ignores repeat taps and refuses to book offline.
@MainActor
@Observable
public final class RoomsStore {
    public enum BookingState: Equatable, Sendable {
        case idle
        case booking
        case booked(bookingId: String)
        case cancelling(bookingId: String)
        case failed(String)
    }

    /// Most free spots first, full rooms last (QuadCore's order).
    public private(set) var rooms: [Room] = []
    /// True when the last attempt to reach the server failed: `rooms` are the last good ones.
    public private(set) var isOffline = false
    /// When `rooms` last came from the server (also after loading them from disk).
    public private(set) var lastUpdated: Date?
    /// The last error, in words, for a banner; nil after a success.
    public private(set) var lastError: String?
    public private(set) var bookingStates: [String: BookingState] = [:]
    /// The person's bookings: those without time, then those in time not yet over, soonest first.
    public private(set) var bookings: [MyBooking] = []

    public let session: KitSession
    /// Polling and live updates: the lifecycle every store shares.
    @ObservationIgnored public private(set) var link: LiveLink?
    private var refresher: Refresher? { link?.refresher }
    /// One Idempotency-Key per intent to book a room, kept until the server gives a definite answer, so a
    /// retry after a network failure cannot book twice.
    @ObservationIgnored private var intents: [String: String] = [:]

    static let roomsKey = "rooms"
    static let bookingsKey = "my-bookings"

    public init(session: KitSession) {
        self.session = session
        link = LiveLink(session: session) { [weak self] in try await self?.fetch() }
        loadCached()
    }

    // MARK: Reading

    public func state(of roomId: String) -> BookingState { bookingStates[roomId] ?? .idle }

    /// Whether a Book button for the room should be enabled.
    public func canBook(_ roomId: String) -> Bool {
        guard !isOffline, let room = rooms.first(where: { $0.id == roomId }), room.spots > 0 else { return false }
        switch state(of: roomId) {
        case .idle, .failed: return true
        default: return false
        }
    }

    /// The rooms with at least `minSpots` free, in `building`, in booking order.
    public func rooms(minSpots: Int?, building: String?) -> [Room] {
        Room.filtered(rooms, minSpots: minSpots, building: building)
    }

    /// How old the data is (for "updated 3 min ago"), by the session's clock.
    public var age: TimeInterval? { lastUpdated.map { session.clock.now.timeIntervalSince($0) } }

    // MARK: Lifecycle

    /// Loads the last good data from disk, so the screen has something before the network answers.
    public func loadCached() {
        guard let offline = session.offline, let entry = offline.load([Room].self, for: Self.roomsKey) else { return }
        rooms = Room.sortedForBooking(entry.value)
        lastUpdated = entry.savedAt
        if let bookings = offline.load([MyBooking].self, for: Self.bookingsKey) { applyBookings(bookings.value) }
    }

    /// How many refreshes reached the network layer (coalesced ones count once).
    public var refreshCount: Int {
        get async { await refresher?.runs ?? 0 }
    }

    // MARK: Fetching

    private func fetch() async throws {
        do {
            let fetched = try await session.client.rooms()
            let now = session.clock.now
            var bookings: [MyBooking]?
            if session.client.tokens.token != nil {
                bookings = try? await session.client.myBookings()
            }
            rooms = Room.sortedForBooking(fetched.value)
            lastUpdated = now
            isOffline = false
            lastError = nil
            if let bookings { applyBookings(bookings) }
            try? session.offline?.save(fetched.value, for: Self.roomsKey, at: now, etag: fetched.etag)
            if let bookings { try? session.offline?.save(bookings, for: Self.bookingsKey, at: now) }
        } catch {
            let kit = KitError.from(error)
            if kit.isOffline { isOffline = true }
            lastError = kit.description
            throw kit
        }
    }

    /// The person's bookings decide which rooms show as booked: those held now (or without time).
    fileprivate func applyBookings(_ bookings: [MyBooking]) {
        self.bookings = bookings
        let now = session.clock.now
        let held = bookings.filter { ($0.start ?? now) <= now && ($0.end ?? now.addingTimeInterval(1)) > now }
        let booked = Dictionary(held.map { ($0.roomId, $0.id) }, uniquingKeysWith: { first, _ in first })
        for (roomId, state) in bookingStates {
            if case .booked = state, booked[roomId] == nil { bookingStates[roomId] = .idle }
        }
        for (roomId, bookingId) in booked {
            switch state(of: roomId) {
            case .booking, .cancelling: continue
            default:
                bookingStates[roomId] = .booked(bookingId: bookingId)
                // A booking whose answer was lost did happen: that intent is done, and the next booking in this
                // room (after a cancel) is a new one, not a replay of it.
                intents[roomId] = nil
            }
        }
    }

    fileprivate func setSpots(_ roomId: String, _ spots: Int) {
        guard let index = rooms.firstIndex(where: { $0.id == roomId }) else { return }
        let room = rooms[index]
        rooms[index] = Room(
            id: room.id, name: room.name, building: room.building, capacity: room.capacity, spots: spots,
            thumbnail: room.thumbnail)
        rooms = Room.sortedForBooking(rooms)
    }

    // MARK: Live updates

    /// A `room` event with new spots updates that room in place; anything else (a new room, a rename, a
    /// `reset`) refreshes.
    public func apply(_ event: ServerEvent) async {
        switch event.kind {
        case .room:
            if let change = event.decode(RoomEvent.self), change.change == .spots, let spots = change.spots,
                rooms.contains(where: { $0.id == change.id })
            {
                setSpots(change.id, spots)
                // A refresh running now may have read the old spots: it reads again.
                await refresher?.noteChange()
            } else {
                await refresher?.refreshAfterChange()
            }
        case .reset:
            await refresher?.refreshAfterChange()
        default:
            break
        }
    }

    // MARK: Booking

    /// Books a spot. Ignored while this room is booking, booked or cancelling (repeat taps); refused offline.
    @discardableResult
    public func book(_ roomId: String) async -> BookingState {
        switch state(of: roomId) {
        case .booking, .booked, .cancelling: return state(of: roomId)
        case .idle, .failed: break
        }
        guard !isOffline else {
            let state = BookingState.failed(
                KitError.writeRefusedOffline("You are offline: booking needs a connection, and is not queued.")
                    .description)
            bookingStates[roomId] = state
            return state
        }
        let key = intents[roomId] ?? UUID().uuidString
        intents[roomId] = key
        bookingStates[roomId] = .booking
        do {
            let (booking, spots) = try await session.client.book(roomId: roomId, idempotencyKey: key)
            intents[roomId] = nil
            setSpots(roomId, spots)
            bookingStates[roomId] = .booked(bookingId: booking.id)
        } catch {
            let kit = KitError.from(error)
            if kit.isOffline {
                // The request may have reached the server: the next try repeats this intent's key.
                isOffline = true
            } else {
                intents[roomId] = nil
            }
            lastError = kit.description
            bookingStates[roomId] = .failed(kit.description)
        }
        return state(of: roomId)
    }

    /// Cancels the person's booking in the room. Refused offline; throws the server's reason otherwise.
    public func cancel(_ roomId: String) async throws {
        guard case .booked(let bookingId) = state(of: roomId) else { return }
        guard !isOffline else {
            throw KitError.writeRefusedOffline("You are offline: cancelling needs a connection, and is not queued.")
        }
        bookingStates[roomId] = .cancelling(bookingId: bookingId)
        do {
            try await session.client.cancel(roomId: roomId, bookingId: bookingId)
            bookingStates[roomId] = .idle
            if let room = rooms.first(where: { $0.id == roomId }) { setSpots(roomId, room.spots + 1) }
        } catch {
            let kit = KitError.from(error)
            if kit.isOffline { isOffline = true }
            bookingStates[roomId] = .booked(bookingId: bookingId)
            lastError = kit.description
            throw kit
        }
    }
}

// MARK: Booking in time

extension RoomsStore {
    /// Books `timed` in the room (a series when it repeats) and reads the person's bookings again; returns what
    /// became of each date of a series. Refused offline; throws the server's reason (the rule broken, taken).
    @discardableResult
    public func book(_ roomId: String, _ timed: TimedBooking) async throws -> [OccurrenceOutcome] {
        try await write("booking") {
            let booked = try await self.session.client.book(
                roomId: roomId, timed, idempotencyKey: UUID().uuidString)
            self.setSpots(roomId, booked.spots)
            return booked.outcomes
        }
    }

    /// Checks in one of the person's bookings.
    public func checkIn(_ booking: MyBooking) async throws {
        try await write("checking in") {
            _ = try await self.session.client.checkIn(roomId: booking.roomId, bookingId: booking.id)
        }
    }

    /// Waits in line for `roomId` at a time that is full (`TimedBooking`'s start, length and hold; not repeated):
    /// where the person stands. The seat is held for them when one frees up (`NotificationsStore` hears of it).
    public func wait(_ roomId: String, _ timed: TimedBooking) async throws -> WaitingPlaceRecord {
        try await write("waiting in line") {
            try await self.session.client.wait(
                roomId: roomId, start: timed.start, minutes: timed.minutes, hold: timed.hold,
                idempotencyKey: UUID().uuidString)
        }
    }

    /// Cancels one of the person's bookings, or with `following` the rest of its series.
    public func cancel(_ booking: MyBooking, following: Bool = false) async throws {
        try await write("cancelling") {
            try await self.session.client.cancel(roomId: booking.roomId, bookingId: booking.id, following: following)
        }
    }

    /// A write, then the person's bookings read again (their seats now come by the room's event).
    private func write<T>(_ doing: String, _ body: () async throws -> T) async throws -> T {
        guard !isOffline else {
            throw KitError.writeRefusedOffline("You are offline: \(doing) needs a connection, and is not queued.")
        }
        do {
            let result = try await body()
            if let mine = try? await session.client.myBookings() { applyBookings(mine) }
            return result
        } catch {
            let kit = KitError.from(error)
            if kit.isOffline { isOffline = true }
            lastError = kit.description
            throw kit
        }
    }
}

extension RoomsStore: LiveStore {}
