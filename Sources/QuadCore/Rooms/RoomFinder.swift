import Foundation

/// "A room for 6 people, 10:00 to 10:30": the rooms that fit, in the seed's order (most room first, nearly full
/// last), and for the others when they are next free for as long that day. A room fits with as many seats free, or,
/// when nobody holds any of it then and it holds that many people, as a whole room.
public enum RoomFinder {
    public struct Candidate: Sendable {
        public let id: String
        public let name: String
        public let occupancy: Occupancy
        /// How many people it holds (more than its seats, for some).
        public let capacity: Int
        /// Its building's rules (its opening hours, its own where it has them).
        public let policy: BookingPolicy

        public init(
            id: String, name: String, occupancy: Occupancy, capacity: Int? = nil, policy: BookingPolicy = .default
        ) {
            self.id = id
            self.name = name
            self.occupancy = occupancy
            self.capacity = capacity ?? occupancy.seats
            self.policy = policy
        }

        /// What to book for `people` during `range` (open then): their seats, the whole room, or nil.
        func hold(for people: Int, during range: SlotRange) -> Hold? {
            if occupancy.allows(.seat, seats: people, during: range) { return .seat }
            if people <= capacity, occupancy.allows(.room, during: range) { return .room }
            return nil
        }
    }

    public struct Choice: Sendable, Equatable, Codable {
        public var id: String
        public var name: String
        /// Seats free through the whole range asked.
        public var freeSeats: Int
        /// When the room is next free for as many people and as long, later that day (nil: not that day).
        public var nextFree: Date?
        /// How the group gets in: with seats (`people` of them), or as the whole room. Nil for the others.
        public var hold: Hold?
    }

    /// `fitting`: open and with seats for `people` through all of `range`, the most free seats first (ties by name);
    /// `others`: the rest, the soonest free first, with `nextFree` looked for in `range`'s day's opening hours.
    public static func find(
        _ rooms: [Candidate], range: SlotRange, people: Int, clock: CampusClock
    ) -> (fitting: [Choice], others: [Choice]) {
        var fitting: [Choice] = []
        var others: [Choice] = []
        let day = clock.date(of: range.start)
        let start = clock.time(of: range.start).minutes
        for room in rooms {
            let open = room.policy.closedReason(date: day, start: start, end: start + range.minutes) == nil
            let free = open ? room.occupancy.freeSeats(during: range) : 0
            if open, let hold = room.hold(for: people, during: range) {
                fitting.append(Choice(id: room.id, name: room.name, freeSeats: free, nextFree: nil, hold: hold))
            } else {
                let next = nextFree(room, after: range, people: people, clock: clock)
                others.append(Choice(id: room.id, name: room.name, freeSeats: free, nextFree: next))
            }
        }
        let byName = { (a: Choice, b: Choice) in
            a.name.lowercased() != b.name.lowercased() ? a.name.lowercased() < b.name.lowercased() : a.id < b.id
        }
        fitting.sort { $0.freeSeats != $1.freeSeats ? $0.freeSeats > $1.freeSeats : byName($0, $1) }
        others.sort { a, b in
            switch (a.nextFree, b.nextFree) {
            case let (x?, y?) where x != y: x < y
            case (.some, .none): true
            case (.none, .some): false
            default: byName(a, b)
            }
        }
        return (fitting, others)
    }

    /// The first start after `range`'s, on the quarter hour and the same day, where `people` seats are free for as
    /// long within an opening period.
    static func nextFree(_ room: Candidate, after range: SlotRange, people: Int, clock: CampusClock) -> Date? {
        guard people <= max(room.occupancy.seats, room.capacity) else { return nil }
        let day = clock.date(of: range.start)
        var candidate = range.shifted(by: 1)
        while clock.date(of: candidate.start) == day {
            let start = clock.time(of: candidate.start).minutes
            if room.policy.closedReason(date: day, start: start, end: start + range.minutes) == nil,
                room.hold(for: people, during: candidate) != nil
            {
                return candidate.start
            }
            candidate = candidate.shifted(by: 1)
        }
        return nil
    }
}
