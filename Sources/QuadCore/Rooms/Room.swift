import Foundation

/// A room people can book a spot in, as the API sends it. A superset of the original app's
/// `RoomResponse { name, spots, thumbnail }`, so the original clients decode it.
public struct Room: Codable, Sendable, Equatable, Identifiable {
    /// A stable slug: `ljerka`.
    public var id: String
    public var name: String
    public var building: String
    /// How many people the room holds (a group may book it whole, empty, up to this many).
    public var capacity: Int
    /// Seats free now, of `seats`: the original apps' spots.
    public var spots: Int
    /// The seats it offers for booking (some rooms hold more people than they offer seats).
    public var seats: Int?
    /// The photo's absolute URL.
    public var thumbnail: String?
    public var availability: Availability

    public init(
        id: String, name: String, building: String, capacity: Int, spots: Int, seats: Int? = nil,
        thumbnail: String? = nil
    ) {
        self.id = id
        self.name = name
        self.building = building
        self.capacity = capacity
        self.spots = spots
        self.seats = seats
        self.thumbnail = thumbnail
        self.availability = Availability(spots: spots, capacity: capacity)
    }
}

/// How bookable a room is, for the eye (colour, badge) and the ear (its label).
public enum Availability: String, Codable, Sendable, CaseIterable {
    case bookable
    /// Three spots or fewer, or at most a tenth of the capacity: book soon.
    case runningLow = "low"
    case full

    public init(spots: Int, capacity: Int) {
        if spots <= 0 {
            self = .full
        } else if spots <= 3 || spots * 10 <= capacity {
            self = .runningLow
        } else {
            self = .bookable
        }
    }
}

extension Room {
    /// The order people see: most free spots first (the best chance of a booking), full rooms last,
    /// ties by name.
    public static func sortedForBooking(_ rooms: [Room]) -> [Room] {
        rooms.sorted { a, b in
            if a.spots != b.spots { return a.spots > b.spots }
            let (nameA, nameB) = (a.name.lowercased(), b.name.lowercased())
            return nameA != nameB ? nameA < nameB : a.id < b.id
        }
    }

    /// Rooms with at least `minSpots` free and, when given, in `building` (compared without case).
    public static func filtered(_ rooms: [Room], minSpots: Int?, building: String?) -> [Room] {
        rooms.filter { room in
            (minSpots.map { room.spots >= $0 } ?? true)
                && (building.map { room.building.caseInsensitiveCompare($0) == .orderedSame } ?? true)
        }
    }
}

/// A seat (or the whole room) held by a person for a time.
public struct Booking: Codable, Sendable, Equatable, Identifiable {
    /// Unguessable: 128 random bits.
    public var id: String
    public var roomId: String
    public var person: String
    /// ISO 8601, UTC.
    public var createdAt: String
    /// When it starts and ends; both nil for a booking made before rooms had time, held until cancelled.
    public var start: Date?
    public var end: Date?
    /// One seat, or the whole room (nil for a booking without time: one seat).
    public var hold: Hold?
    /// How many seats it holds (nil: the whole room, or one for a booking made before rooms had time).
    public var seats: Int?
    /// The series it is one date of, if booked as one.
    public var seriesId: String?
    /// When it is released if nobody checked it in (nil: no check-in asked, or checked in).
    public var checkInBy: Date?
    /// Whether it was checked in.
    public var checkedIn: Bool?

    public init(
        id: String, roomId: String, person: String, createdAt: String, start: Date? = nil, end: Date? = nil,
        hold: Hold? = nil, seats: Int? = nil, seriesId: String? = nil, checkInBy: Date? = nil,
        checkedIn: Bool? = nil
    ) {
        self.id = id
        self.roomId = roomId
        self.person = person
        self.createdAt = createdAt
        self.start = start
        self.end = end
        self.hold = hold
        self.seats = seats
        self.seriesId = seriesId
        self.checkInBy = checkInBy
        self.checkedIn = checkedIn
    }
}
