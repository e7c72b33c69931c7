import Foundation

/// What people wait for: a room's time slot (a seat or the whole room), or a book on loan.
public enum WaitingKind: String, Codable, Sendable, CaseIterable {
    case room, book
}

/// One person's place in a waiting line, and the offer they hold while it is theirs to take.
///
/// A line is a `kind`, a `thing` (the room's id, the book's) and a `detail` (for a room, the slot and the hold: people
/// waiting for 10:00–11:00 are not in the line for 10:00–10:30). First come, first served: `seq` only grows in a line.
public struct WaitingPlace: Sendable, Equatable, Identifiable {
    public var id: String
    public var kind: WaitingKind
    public var thing: String
    public var detail: String
    /// The person's username, lowercased.
    public var owner: String
    /// Their name as shown.
    public var name: String
    /// What they wait for, as shown ("Dune"; "Mostafa, Thu 26 Nov 10:00–11:00").
    public var label: String
    public var seq: Int
    public var joinedAt: Date
    /// Until when the thing is held for them; nil while they wait.
    public var offeredUntil: Date?

    public init(
        id: String, kind: WaitingKind, thing: String, detail: String, owner: String, name: String, label: String,
        seq: Int, joinedAt: Date, offeredUntil: Date? = nil
    ) {
        self.id = id
        self.kind = kind
        self.thing = thing
        self.detail = detail
        self.owner = owner
        self.name = name
        self.label = label
        self.seq = seq
        self.joinedAt = joinedAt
        self.offeredUntil = offeredUntil
    }

    public var line: WaitingLine.Key { .init(kind: kind, thing: thing, detail: detail) }

    /// Whether they hold an offer at `now` (it ends at `offeredUntil`, exclusive).
    public func holdsOffer(at now: Date) -> Bool { offeredUntil.map { now < $0 } ?? false }

    /// Whether their offer ended at or before `now`: they leave the line, and the offer passes on.
    public func offerLapsed(at now: Date) -> Bool { offeredUntil.map { $0 <= now } ?? false }
}

/// The rules of a line: who is first, where each person stands, and who the next offer goes to.
public struct WaitingLine: Sendable, Equatable {
    public struct Key: Hashable, Sendable {
        public var kind: WaitingKind
        public var thing: String
        public var detail: String

        public init(kind: WaitingKind, thing: String, detail: String) {
            self.kind = kind
            self.thing = thing
            self.detail = detail
        }
    }

    /// In order: first come first.
    public let places: [WaitingPlace]

    public init(_ places: [WaitingPlace]) {
        self.places = places.sorted { ($0.seq, $0.id) < ($1.seq, $1.id) }
    }

    /// The lines `places` form, the line whose first person came first leading (that line is offered first when
    /// one freed seat could serve several).
    public static func lines(_ places: [WaitingPlace]) -> [WaitingLine] {
        Dictionary(grouping: places, by: \.line).values.map(WaitingLine.init)
            .sorted { a, b in
                let (x, y) = (a.places[0], b.places[0])
                return (x.joinedAt, x.seq, x.id) < (y.joinedAt, y.seq, y.id)
            }
    }

    /// 1 for the first in line.
    public func position(of id: String) -> Int? { places.firstIndex { $0.id == id }.map { $0 + 1 } }

    /// The place holding an offer, live or not: a line has at most one.
    public var offer: WaitingPlace? { places.first { $0.offeredUntil != nil } }

    /// Whom the next offer goes to: the first in line, when nobody holds one.
    public var next: WaitingPlace? { offer == nil ? places.first : nil }
}

/// How long a freed thing is held for the first in line (settings: `QUAD_ROOM_OFFER_MINUTES`,
/// `QUAD_BOOK_OFFER_HOURS`).
public struct OfferTerms: Sendable, Equatable {
    public var room: TimeInterval
    public var book: TimeInterval

    public static let `default` = OfferTerms(room: 15 * 60, book: 2 * 86_400)

    public init(room: TimeInterval, book: TimeInterval) {
        self.room = room
        self.book = book
    }

    /// When an offer made at `now` ends; a room's offer never outlasts the slot it is for.
    public func until(_ kind: WaitingKind, from now: Date, slotEnd: Date? = nil) -> Date {
        let end = now.addingTimeInterval(kind == .room ? room : book)
        return slotEnd.map { min($0, end) } ?? end
    }
}

extension WaitingPlace {
    /// A room line's detail: the slot waited for and the hold, `"<first slot>-<end slot>-<hold>"`.
    public static func roomDetail(_ range: SlotRange, _ hold: Hold) -> String {
        "\(range.lower)-\(range.upper)-\(hold.rawValue)"
    }

    /// The slot and hold a room's place waits for (nil for a book's).
    public var roomSlot: (range: SlotRange, hold: Hold)? {
        let parts = detail.split(separator: "-")
        guard kind == .room, parts.count == 3, let lower = Int(parts[0]), let upper = Int(parts[1]),
            let range = SlotRange(lower: lower, upper: upper), let hold = Hold(rawValue: String(parts[2]))
        else { return nil }
        return (range, hold)
    }
}

/// A place in line on the wire (the contract's `WaitingPlace`): what the server sends and the kit and the command line
/// read, one type for all. Instants are RFC 3339 text in UTC.
public struct WaitingPlaceRecord: Codable, Hashable, Sendable {
    public var id: String
    public var kind: WaitingKind
    public var thing: String
    public var label: String
    /// 1 is next in line.
    public var position: Int
    public var joinedAt: String
    /// A room: the time waited for, and the hold.
    public var start: String?
    public var end: String?
    public var hold: Hold?
    /// While it is held for them: until when.
    public var offeredUntil: String?

    public init(_ place: WaitingPlace, position: Int) {
        let slot = place.roomSlot
        let text = { (date: Date) in date.formatted(.iso8601) }
        id = place.id
        kind = place.kind
        thing = place.thing
        label = place.label
        self.position = position
        joinedAt = text(place.joinedAt)
        start = slot.map { text($0.range.start) }
        end = slot.map { text($0.range.end) }
        hold = slot?.hold
        offeredUntil = place.offeredUntil.map(text)
    }

    /// When the offer ends, read back.
    public var offerEnds: Date? { offeredUntil.flatMap { try? Date($0, strategy: .iso8601) } }
}
