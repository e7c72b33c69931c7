/// What each event on `/api/events` says, by its type (the contract's `x-quad-events` schemas): the server
/// publishes these and the kit and the command line read them, so both sides agree by construction.

/// The kinds of event the stream carries: one list, for the server that publishes them and the kit and the command
/// line that ask for them (`?types=`) and read them. The raw value is the frame's `event:` name.
public enum EventKind: String, Sendable, CaseIterable, Codable {
    case room, special, book, parking, departure, waiting
    /// Something happened to one of the listener's bookings or places that they did not do (`Notice`); private.
    case notice
    /// The stream's first frame when the client missed more than the server keeps: reload everything.
    case reset
}

/// An event's payload, with the kind it is published as.
public protocol LiveEvent: Codable, Sendable {
    static var kind: EventKind { get }
}

/// `room`: which room, and its spots now (nil when it was deleted).
public struct RoomEvent: LiveEvent, Equatable {
    public static let kind = EventKind.room
    public var id: String
    public var spots: Int?
    public var change: Kind

    public enum Kind: String, Codable, Sendable { case spots, updated, created, deleted }

    public init(id: String, spots: Int?, change: Kind) {
        self.id = id
        self.spots = spots
        self.change = change
    }
}

/// `special`: which special (nil for the whole list) and what happened.
public struct SpecialEvent: LiveEvent, Equatable {
    public static let kind = EventKind.special
    public var id: String?
    public var change: Kind

    public enum Kind: String, Codable, Sendable { case created, updated, deleted, reordered, settings, schedule }

    public init(id: String?, change: Kind) {
        self.id = id
        self.change = change
    }
}

/// `book`: which book (nil when every book went), what happened, and its status now. No one's name: anyone may
/// listen to the stream.
public struct BookEvent: LiveEvent, Equatable {
    public static let kind = EventKind.book
    public var id: Int?
    public var change: Kind
    public var status: BookStatus?

    public enum Kind: String, Codable, Sendable { case created, updated, checkedOut, returned, deleted, cleaned }

    public init(id: Int?, change: Kind, status: BookStatus?) {
        self.id = id
        self.change = change
        self.status = status
    }
}

/// `parking`: a car park's reading.
public struct ParkingEvent: LiveEvent, Equatable {
    public static let kind = EventKind.parking
    public var id: String
    public var free: Int
    public var capacity: Int
    public var state: CarParkState
    public var updatedAt: String
    public var live: Bool
    /// Set when an admin changed or removed the car park: clients reload the list rather than patch one count.
    public var refresh: Bool?

    public init(
        id: String, free: Int, capacity: Int, state: CarParkState, updatedAt: String, live: Bool, refresh: Bool? = nil
    ) {
        self.id = id
        self.free = free
        self.capacity = capacity
        self.state = state
        self.updatedAt = updatedAt
        self.live = live
        self.refresh = refresh
    }
}

/// `departure`: a shuttle's new time, as an instant and on the campus wall clock (`yyyy-mm-ddTHH:mm:ss`, as the
/// schedule's stops give it), so a page shows the time it counts down to.
public struct DepartureEvent: LiveEvent, Equatable {
    public static let kind = EventKind.departure
    public var id: String
    public var expectedAt: String
    public var live: Bool
    /// Set when an admin changed or removed a route (then `id` may name the route): clients reload the list.
    public var refresh: Bool?
    public var predictedArrivalDate: String

    enum CodingKeys: String, CodingKey {
        case id, expectedAt, live, refresh
        case predictedArrivalDate = "predicted_arrival_date"
    }

    public init(id: String, expectedAt: String, live: Bool, refresh: Bool? = nil, predictedArrivalDate: String) {
        self.id = id
        self.expectedAt = expectedAt
        self.live = live
        self.refresh = refresh
        self.predictedArrivalDate = predictedArrivalDate
    }
}

/// `waiting`: a change to one of the listener's own places in line; private, sent only to that person's streams.
/// `offered` says the thing is theirs to take until `offeredUntil`.
public struct WaitingEvent: LiveEvent, Equatable {
    public static let kind = EventKind.waiting

    public var place: String
    public var kind: WaitingKind
    public var thing: String
    public var label: String
    public var change: Change
    /// Where they stand now (1 is first), while they are in line.
    public var position: Int?
    /// RFC 3339, while an offer is theirs.
    public var offeredUntil: String?

    public enum Change: String, Codable, Sendable {
        /// Joined; moved up; made an offer; the offer ended untaken; took it; left; removed by an admin; what they
        /// waited for is over.
        case joined, moved, offered, lapsed, accepted, left, removed, ended
    }

    public init(
        place: String, kind: WaitingKind, thing: String, label: String, change: Change, position: Int? = nil,
        offeredUntil: String? = nil
    ) {
        self.place = place
        self.kind = kind
        self.thing = thing
        self.label = label
        self.change = change
        self.position = position
        self.offeredUntil = offeredUntil
    }
}

/// `notice`: a notice was posted to the listener or dismissed by them (`Notice`); private, sent only to that
/// person's streams.
public struct NoticeEvent: LiveEvent, Equatable {
    public static let kind = EventKind.notice
    public var id: String
    public var change: Change

    public enum Change: String, Codable, Sendable { case posted, dismissed }

    public init(id: String, change: Change) {
        self.id = id
        self.change = change
    }
}
