import Foundation

/// A span of time on the 15-minute grid: slots `lower ..< upper`, counted in quarter hours since 1970 (UTC).
/// A campus's quarter hours are the same slots: every time zone's offset is a whole number of quarter hours.
public struct SlotRange: Hashable, Sendable, Codable, CustomStringConvertible {
    public static let slotSeconds = 900

    public let lower: Int
    public let upper: Int

    public init?(lower: Int, upper: Int) {
        guard lower < upper else { return nil }
        self.lower = lower
        self.upper = upper
    }

    /// From `start` to `end`, both on the grid, `end` later.
    public init?(start: Date, end: Date) {
        guard let lower = Self.slot(at: start), let upper = Self.slot(at: end) else { return nil }
        self.init(lower: lower, upper: upper)
    }

    /// The slot that starts at `instant`, if one does.
    public static func slot(at instant: Date) -> Int? {
        let seconds = instant.timeIntervalSince1970
        guard seconds == seconds.rounded(), Int(seconds) % slotSeconds == 0 else { return nil }
        return Int(seconds) / slotSeconds
    }

    /// The slot `instant` falls in.
    public static func slot(containing instant: Date) -> Int {
        Int((instant.timeIntervalSince1970 / Double(slotSeconds)).rounded(.down))
    }

    public static func instant(ofSlot slot: Int) -> Date { Date(timeIntervalSince1970: Double(slot * slotSeconds)) }

    public var start: Date { Self.instant(ofSlot: lower) }
    public var end: Date { Self.instant(ofSlot: upper) }
    public var slots: Range<Int> { lower..<upper }
    public var minutes: Int { (upper - lower) * 15 }

    /// Whether the two share at least one slot (touching ends do not).
    public func overlaps(_ other: SlotRange) -> Bool { lower < other.upper && other.lower < upper }

    public func shifted(by slots: Int) -> SlotRange { SlotRange(lower: lower + slots, upper: upper + slots)! }

    public var description: String { "\(start.formatted(.iso8601))/\(end.formatted(.iso8601))" }
}

/// What a booking holds for its time: one seat, or the whole room (nobody else in it).
public enum Hold: String, Codable, Sendable, CaseIterable {
    case seat
    case room
}

/// A room's bookings over time, slot by slot: what is free, and whether one more booking fits. The store decides
/// under a lock per room (see `RoomStore`); this is the rule it applies.
public struct Occupancy: Sendable {
    /// The room's seats.
    public let seats: Int
    private var seatsHeld: [Int: Int] = [:]
    private var wholeRoom: [Int: Int] = [:]

    /// `holds`: one seat or the whole room each.
    public init(seats: Int, holds: [(range: SlotRange, hold: Hold)] = []) {
        self.seats = seats
        for (range, hold) in holds { add(hold, during: range) }
    }

    /// `groups`: a number of seats (or the whole room) each, as bookings for a group hold them.
    public init(seats: Int, groups: [(range: SlotRange, hold: Hold, seats: Int)]) {
        self.seats = seats
        for (range, hold, count) in groups { add(hold, seats: count, during: range) }
    }

    /// Adds `count` seats (ignored for the whole room) held during `range`.
    public mutating func add(_ hold: Hold, seats count: Int = 1, during range: SlotRange) {
        for slot in range.slots {
            switch hold {
            case .seat: seatsHeld[slot, default: 0] += count
            case .room: wholeRoom[slot, default: 0] += 1
            }
        }
    }

    /// Seats free in `slot`: none while the whole room is booked.
    public func freeSeats(in slot: Int) -> Int {
        wholeRoom[slot] != nil ? 0 : max(0, seats - seatsHeld[slot, default: 0])
    }

    /// Seats free for all of `range`: the fewest free in any of its slots.
    public func freeSeats(during range: SlotRange) -> Int {
        range.slots.map(freeSeats(in:)).min() ?? seats
    }

    /// Whether `hold` can be added for `range`: `count` seats need as many free in every slot; the whole room needs
    /// every slot empty.
    public func allows(_ hold: Hold, seats count: Int = 1, during range: SlotRange) -> Bool {
        switch hold {
        case .seat: count >= 1 && freeSeats(during: range) >= count
        case .room: range.slots.allSatisfy { seatsHeld[$0] == nil && wholeRoom[$0] == nil }
        }
    }

    /// Seats held in the busiest slot, a whole-room booking counting as every seat: never more than `seats` when
    /// every booking was added through `allows` (what the concurrency tests check).
    public var peakSeatsHeld: Int {
        Set(seatsHeld.keys).union(wholeRoom.keys)
            .map { wholeRoom[$0, default: 0] * seats + seatsHeld[$0, default: 0] }.max() ?? 0
    }
}
