import Foundation

/// Something that happened to a person's bookings or places in line that they did not do themselves (an admin
/// removed the room), said to them until they dismiss it: on Today, on `/notifications`, in the badge, and in
/// `GET /api/me/notifications`.
public struct Notice: Codable, Sendable, Hashable, Identifiable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// Their bookings in a room that was removed are cancelled.
        case bookingsEnded
        /// Their places in line for a room that was removed have ended.
        case placesEnded
    }

    public var id: String
    public var kind: Kind
    /// The room's name (it is gone: nothing else names it).
    public var room: String
    /// How many bookings or places it was about.
    public var count: Int
    /// The first one's time, when it had one (a booking "now" of the original apps has none).
    public var start: Date?
    public var end: Date?
    /// When it happened.
    public var at: Date

    public init(
        id: String, kind: Kind, room: String, count: Int, start: Date? = nil, end: Date? = nil, at: Date
    ) {
        self.id = id
        self.kind = kind
        self.room = room
        self.count = count
        self.start = start
        self.end = end
        self.at = at
    }

    /// What it says, in `t`'s language, with its time on the campus's clock: "Mostafa was removed: your booking on
    /// Friday 27 November, 10:00–10:30 is cancelled."
    public func sentence(_ t: Localizer, clock: CampusClock) -> String {
        var arguments = ["room": room]
        var key = "notices.\(kind.rawValue)"
        if let start, let end, count == 1 {
            key += ".one"
            arguments["when"] = t(
                "notices.when",
                [
                    "date": t.longDate(clock.date(of: start)), "start": clock.time(of: start).description,
                    "end": clock.time(of: end).description,
                ])
        } else if count == 1 {
            key += ".untimed"
        } else {
            key += ".many"
        }
        return t(key, count: count, arguments)
    }
}
