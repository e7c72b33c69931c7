import Foundation

/// "A room for 6 people, 10:00 to 10:30": the rooms that fit, in the seed's order (most room first, nearly full
/// last), and for the others when they are next free for as long that day.
public enum RoomFinder {
    public struct Candidate: Sendable {
        public let id: String
        public let name: String
        public let occupancy: Occupancy
        /// Its building's rules (its opening hours, its own where it has them).
        public let policy: BookingPolicy

        public init(id: String, name: String, occupancy: Occupancy, policy: BookingPolicy = .default) {
            self.id = id
            self.name = name
            self.occupancy = occupancy
            self.policy = policy
        }
    }

    public struct Choice: Sendable, Equatable, Codable {
        public var id: String
        public var name: String
        /// Seats free through the whole range asked.
        public var freeSeats: Int
        /// When the room is next free for as many people and as long, later that day (nil: not that day).
        public var nextFree: Date?
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
            if free >= people {
                fitting.append(Choice(id: room.id, name: room.name, freeSeats: free, nextFree: nil))
            } else {
                let next = nextFree(room.occupancy, after: range, people: people, policy: room.policy, clock: clock)
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
    static func nextFree(
        _ occupancy: Occupancy, after range: SlotRange, people: Int, policy: BookingPolicy, clock: CampusClock
    ) -> Date? {
        guard people <= occupancy.seats else { return nil }
        let day = clock.date(of: range.start)
        var candidate = range.shifted(by: 1)
        while clock.date(of: candidate.start) == day {
            let start = clock.time(of: candidate.start).minutes
            if policy.closedReason(date: day, start: start, end: start + range.minutes) == nil,
                occupancy.freeSeats(during: candidate) >= people
            {
                return candidate.start
            }
            candidate = candidate.shifted(by: 1)
        }
        return nil
    }
}
