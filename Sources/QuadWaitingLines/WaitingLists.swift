import Foundation
import NIOConcurrencyHelpers
import QuadCore
import QuadPlatform
import SQLKit

/// What a feature with waiting lines does for them (Rooms for a room's time slots, Library for books), each under
/// its own lock on the thing: the platform's offers, notifications and admin pages ask it by kind.
package protocol WaitingThings: Sendable {
    /// Gives `place`'s owner what their offer holds (books the slot, checks the book out) and ends their wait; 409
    /// when the offer has ended.
    func accept(_ place: WaitingPlace, by person: Person) async throws -> AcceptedOffer
    /// Takes `place` out of its line (`change` says why), passing its offer on.
    func remove(_ place: WaitingPlace, _ change: WaitingEvent.Change) async throws
    /// Passes on the offers that ended and offers what is free to the next in line.
    func settle(thing: String) async throws
}

/// Why a booking, a checkout or an acceptance was refused, about waiting lines (the same words for rooms and books).
package enum WaitingRefusal {
    /// Someone not in line (or not first) asked for what is held for the first in line.
    package static func held(_ what: String, until: Date) -> Problem {
        Problem.conflict(
            "held-for-line", title: "Held for someone in line",
            detail: "\(what) is held for the next person in line until \(Timestamp.string(until)).")
    }
    package static let alreadyWaiting = Problem.conflict(
        "already-waiting", title: "Already in line", detail: "You are in this line already.")
    package static func offerEnded(_ what: String) -> Problem {
        Problem.conflict(
            "offer-ended", title: "Offer ended", detail: "\(what) is no longer held for you: the offer has ended.")
    }
}

/// What accepting an offer gave: where to see it.
package struct AcceptedOffer: Sendable {
    package var kind: WaitingKind
    package var thing: String
    /// The page that shows it (the room's day, the book).
    package var path: String
    /// The booking made, for a room.
    package var bookingId: String?

    package init(kind: WaitingKind, thing: String, path: String, bookingId: String? = nil) {
        self.kind = kind
        self.thing = thing
        self.path = path
        self.bookingId = bookingId
    }
}

/// What changed in some lines, to announce once the transaction is committed (`WaitingLists.announce`), and whether
/// mail was queued in it (an offer's, a booking's), for the courier to take at once.
package struct WaitingChanges: Sendable {
    package var changed: [(WaitingPlace, WaitingEvent.Change)] = []
    /// The places still in the lines that changed, for their new positions.
    package var remaining: [WaitingPlace] = []
    package var mailed = false

    package init() {}

    package var isEmpty: Bool { changed.isEmpty && !mailed }

    package mutating func merge(_ other: WaitingChanges) {
        mailed = mailed || other.mailed
        changed += other.changed
        let ids = Set(other.remaining.map(\.id))
        remaining = remaining.filter { !ids.contains($0.id) } + other.remaining
    }
}

/// Waiting lines, one engine for every feature that keeps lines (Rooms, the Library) and for the Waiting feature's
/// pages and operations, in table `waiting_places`: first come first served per line, and
/// when what a line waits for frees up, an exclusive offer for its first person for a set time (`OfferTerms`).
///
/// A feature calls it inside its own transaction, holding its lock on the thing (a room's row, a book's row), so a
/// line's offers are decided one at a time on every instance: a seat freed by a cancellation goes to the line in the
/// same transaction, before anyone else's booking can see it free. A partial unique index backs the rule that a line
/// has at most one offer at a time.
package final class WaitingLists: Sendable, PersonRemoval {
    let database: Database
    let events: EventHub
    package let clock: any QuadClock
    package let terms: OfferTerms
    /// Offers are mailed to their owners, with times on the campus's clock.
    package let mail: PersonMail
    let campus: any CampusTime
    private let things = NIOLockedValueBox<[WaitingKind: any WaitingThings]>([:])

    package convenience init(platform: Platform, mail: PersonMail, campus: any CampusTime) {
        self.init(
            database: platform.database, events: platform.events, clock: platform.clock,
            terms: platform.configuration.offerTerms, mail: mail, campus: campus)
    }

    package init(
        database: Database, events: EventHub, clock: any QuadClock, terms: OfferTerms, mail: PersonMail,
        campus: any CampusTime
    ) {
        self.database = database
        self.events = events
        self.clock = clock
        self.terms = terms
        self.mail = mail
        self.campus = campus
    }

    package static let migration = Migration(
        id: 6, name: "waiting lines and reminders",
        statements: [
            """
            CREATE TABLE waiting_places (
                id TEXT PRIMARY KEY, kind TEXT NOT NULL, thing TEXT NOT NULL, detail TEXT NOT NULL,
                owner TEXT NOT NULL, name TEXT NOT NULL, label TEXT NOT NULL, seq INTEGER NOT NULL,
                joined_at TEXT NOT NULL, offered_until BIGINT)
            """,
            "CREATE UNIQUE INDEX waiting_places_person ON waiting_places (kind, thing, detail, owner)",
            "CREATE UNIQUE INDEX waiting_places_order ON waiting_places (kind, thing, detail, seq)",
            // A line holds at most one offer, live or ended: an ended one is cleared before the next is made.
            """
            CREATE UNIQUE INDEX waiting_places_one_offer ON waiting_places (kind, thing, detail)
            WHERE offered_until IS NOT NULL
            """,
            "CREATE INDEX waiting_places_owner ON waiting_places (owner)",
            "CREATE INDEX waiting_places_offered ON waiting_places (offered_until)",
            // The reminders a person turned off; none by default.
            "CREATE TABLE reminders_off (owner TEXT NOT NULL, kind TEXT NOT NULL, PRIMARY KEY (owner, kind))",
        ])

    /// A feature says it keeps lines of `kind` (as it is built: it hands itself over).
    package func register(_ kind: WaitingKind, _ handler: any WaitingThings) {
        things.withLockedValue { $0[kind] = handler }
    }

    func handler(_ kind: WaitingKind) throws -> any WaitingThings {
        guard let handler = things.withLockedValue({ $0[kind] }) else {
            throw Problem.notFound("Nothing keeps waiting lines of \(kind.rawValue).")
        }
        return handler
    }

    // MARK: Inside a feature's transaction, under its lock on the thing

    /// Every place in the thing's lines.
    package func places(_ kind: WaitingKind, thing: String, _ sql: any SQLDatabase) async throws -> [WaitingPlace] {
        try await Self.select(sql, "kind = \(bind: kind.rawValue) AND thing = \(bind: thing)")
    }

    /// The things of `kind` whose lines `owner` stands in (a person's removal).
    package func things(_ kind: WaitingKind, of owner: String, _ sql: any SQLDatabase) async throws -> [String] {
        try await Self.select(sql, "kind = \(bind: kind.rawValue) AND owner = \(bind: owner)").map(\.thing)
    }

    /// A column for a feature's own query, 1 when anyone waits in the thing's lines, else 0: a booking reads it with
    /// the statement that locks the room, rather than in a round trip of its own.
    package static func anyPlace(_ kind: WaitingKind, thing: String) -> SQLQueryString {
        anyPlace(kind, thing: SQLBind(thing))
    }

    /// `anyPlace` for the thing `thing` names: a bound value, or a column of the feature's query (a batch of bookings
    /// reads every room's at once).
    package static func anyPlace(_ kind: WaitingKind, thing: any SQLExpression) -> SQLQueryString {
        """
        CASE WHEN EXISTS (SELECT 1 FROM waiting_places WHERE kind = \(bind: kind.rawValue) AND thing = \(thing))
        THEN 1 ELSE 0 END
        """
    }

    /// Puts `owner` at the end of the line; 409 when they are in it already.
    package func join(
        _ line: WaitingLine.Key, owner: String, name: String, label: String, _ sql: any SQLDatabase
    ) async throws -> (place: WaitingPlace, position: Int) {
        let kind = line.kind.rawValue
        let condition: SQLQueryString =
            "kind = \(bind: kind) AND thing = \(bind: line.thing) AND detail = \(bind: line.detail)"
        let mine = try await Self.select(sql, condition)
        if mine.contains(where: { $0.owner == owner }) { throw WaitingRefusal.alreadyWaiting }
        let place = WaitingPlace(
            id: SecureRandom.identifier(byteCount: 16), kind: line.kind, thing: line.thing, detail: line.detail,
            owner: owner, name: name, label: label, seq: (mine.map(\.seq).max() ?? 0) + 1, joinedAt: clock.now)
        try await sql.raw(
            """
            INSERT INTO waiting_places (id, kind, thing, detail, owner, name, label, seq, joined_at)
            VALUES (\(bind: place.id), \(bind: line.kind.rawValue), \(bind: line.thing), \(bind: line.detail),
                    \(bind: owner), \(bind: name), \(bind: label), \(bind: place.seq),
                    \(bind: Timestamp.string(place.joinedAt)))
            """
        ).run()
        return (place, mine.count + 1)
    }

    /// Brings the thing's lines up to `now`: places whose wait is `over` leave, offers that ended pass on, and in
    /// each line without an offer the first person gets one when `fits` says what they wait for is free, given the
    /// offers live now (those made here included: one freed seat goes to one line). Lines are offered in the order
    /// their first person came.
    package func settle(
        _ kind: WaitingKind, thing: String, now: Date, _ sql: any SQLDatabase,
        over: (WaitingPlace) -> Bool = { _ in false }, until: (WaitingPlace) -> Date? = { _ in nil },
        fits: (WaitingPlace, _ offers: [WaitingPlace]) async throws -> Bool
    ) async throws -> WaitingChanges {
        var changes = WaitingChanges()
        let all = try await places(kind, thing: thing, sql)
        guard !all.isEmpty else { return changes }
        var gone: [(WaitingPlace, WaitingEvent.Change)] = []
        for place in all {
            if over(place) {
                gone.append((place, .ended))
            } else if place.offerLapsed(at: now) {
                gone.append((place, .lapsed))
            }
        }
        for (place, _) in gone { try await delete(place.id, sql) }
        let goneIds = Set(gone.map(\.0.id))
        let lines = WaitingLine.lines(all.filter { !goneIds.contains($0.id) })
        var offers = lines.compactMap(\.offer)
        var remaining: [WaitingPlace] = []
        for line in lines {
            var places = line.places
            if let next = line.next, try await fits(next, offers) {
                var offered = next
                offered.offeredUntil = Self.wholeSecond(terms.until(kind, from: now, slotEnd: until(next)))
                try await sql.raw(
                    """
                    UPDATE waiting_places SET offered_until = \(bind: Int(offered.offeredUntil!.timeIntervalSince1970))
                    WHERE id = \(bind: offered.id)
                    """
                ).run()
                offers.append(offered)
                places[0] = offered
                changes.changed.append((offered, .offered))
                if try await mailOffer(offered, now: now, sql) { changes.mailed = true }
            }
            remaining += places
        }
        changes.changed += gone
        if !gone.isEmpty { changes.remaining = remaining }
        return changes
    }

    /// Takes `id` out of its line (accepted, left, removed).
    package func delete(_ id: String, _ sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM waiting_places WHERE id = \(bind: id)").run()
    }

    /// Every line of a thing that is gone (a room or a book deleted).
    package func deleteAll(_ kind: WaitingKind, thing: String, _ sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM waiting_places WHERE kind = \(bind: kind.rawValue) AND thing = \(bind: thing)")
            .run()
    }

    /// Every line of a kind (every book deleted at once).
    package func deleteAll(_ kind: WaitingKind, _ sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM waiting_places WHERE kind = \(bind: kind.rawValue)").run()
    }

    /// An offer's end on the whole second after it (stored as seconds): never earlier than the terms say.
    static func wholeSecond(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.up))
    }

    // MARK: Reading

    package func place(_ id: String) async throws -> WaitingPlace? {
        try await database.read { sql in try await Self.select(sql, "id = \(bind: id)").first }
    }

    /// `owner`'s places, each with where they stand: the lines they are in, read in one statement.
    package func places(of owner: String) async throws -> [(place: WaitingPlace, position: Int)] {
        let key = owner.lowercased()
        let shared = try await database.read { sql in
            try await Self.select(
                sql,
                """
                EXISTS (SELECT 1 FROM waiting_places m WHERE m.owner = \(bind: key) AND m.kind = waiting_places.kind
                        AND m.thing = waiting_places.thing AND m.detail = waiting_places.detail)
                """)
        }
        let mine = WaitingLine.lines(shared).flatMap { line in
            line.places.filter { $0.owner == key }.map { ($0, line.position(of: $0.id) ?? 1) }
        }
        // Offers first, then the lines joined first.
        return mine.sorted { a, b in
            let (x, y) = (a.0.offeredUntil == nil ? 1 : 0, b.0.offeredUntil == nil ? 1 : 0)
            return x != y ? x < y : a.0.joinedAt < b.0.joinedAt
        }
    }

    /// Every line, for admins.
    package func lines() async throws -> [WaitingLine] {
        try await database.read { sql in WaitingLine.lines(try await Self.select(sql, "1 = 1")) }
    }

    // MARK: What people and admins do (dispatched to the feature that keeps the line)

    /// `person` takes their offer; 404 when it is not theirs (nobody learns of others' places).
    package func accept(_ id: String, by person: Person) async throws -> AcceptedOffer {
        guard let place = try await place(id), place.owner == person.username.lowercased() else {
            throw Problem.notFound("You hold no such offer.")
        }
        return try await handler(place.kind).accept(place, by: person)
    }

    /// `person` leaves a line (and declines its offer, if they hold one).
    package func leave(_ id: String, by person: Person) async throws {
        guard let place = try await place(id), place.owner == person.username.lowercased() else {
            throw Problem.notFound("You hold no such place in line.")
        }
        try await handler(place.kind).remove(place, .left)
    }

    /// An admin takes someone out of a line.
    package func remove(_ id: String) async throws {
        guard let place = try await place(id) else { throw Problem.notFound("There is no such place in line.") }
        try await handler(place.kind).remove(place, .removed)
    }

    /// The things whose lines need settling at `now`: an offer ended, or a line without an offer (what it waits
    /// for may have freed up without anyone cancelling: a person removed, a quarter hour passed).
    package func due(at now: Date) async throws -> [(WaitingKind, String)] {
        let seconds = Int(now.timeIntervalSince1970.rounded(.down))
        return try await database.read { sql in
            try await sql.raw(
                """
                SELECT DISTINCT kind, thing FROM waiting_places w
                WHERE offered_until <= \(bind: seconds) OR NOT EXISTS (
                    SELECT 1 FROM waiting_places o WHERE o.kind = w.kind AND o.thing = w.thing
                    AND o.detail = w.detail AND o.offered_until IS NOT NULL)
                """
            ).all().compactMap { row -> (WaitingKind, String)? in
                guard let kind = WaitingKind(rawValue: try row.decode(column: "kind", as: String.self)) else {
                    return nil
                }
                return (kind, try row.decode(column: "thing", as: String.self))
            }
        }
    }

    /// Settles every line that is due (`WaitingKeeper`).
    package func settleDue() async throws {
        for (kind, thing) in try await due(at: clock.now) {
            try await handler(kind).settle(thing: thing)
        }
    }

    // MARK: Announcing

    /// Tells each person of their places that changed, on their own streams only.
    package func announce(_ changes: WaitingChanges) async {
        guard !changes.isEmpty else { return }
        // The mail queued with the changes goes now.
        if changes.mailed { mail.wake() }
        for (place, change) in changes.changed {
            await events.publish(
                WaitingEvent(
                    place: place.id, kind: place.kind, thing: place.thing, label: place.label, change: change,
                    offeredUntil: change == .offered ? place.offeredUntil.map(Timestamp.string) : nil),
                to: place.owner)
        }
        let touched = Set(changes.changed.map(\.0.id))
        for line in WaitingLine.lines(changes.remaining) {
            for place in line.places where !touched.contains(place.id) {
                await events.publish(
                    WaitingEvent(
                        place: place.id, kind: place.kind, thing: place.thing, label: place.label, change: .moved,
                        position: line.position(of: place.id)),
                    to: place.owner)
            }
        }
    }

    // MARK: Leaving with the person

    /// Inside Accounts' removal: the person's places and notices go. Their offers pass on at the next settling
    /// (`WaitingKeeper`, within a minute).
    package func release(
        _ usernameKey: String, in sql: any SQLDatabase
    ) async throws -> @Sendable () async -> Void {
        try await sql.raw("DELETE FROM waiting_places WHERE owner = \(bind: usernameKey)").run()
        try await sql.raw("DELETE FROM reminders_off WHERE owner = \(bind: usernameKey)").run()
        try await sql.raw("DELETE FROM notices WHERE owner = \(bind: usernameKey)").run()
        return {}
    }

    static func select(_ sql: any SQLDatabase, _ condition: SQLQueryString) async throws -> [WaitingPlace] {
        try await sql.raw(
            """
            SELECT id, kind, thing, detail, owner, name, label, seq, joined_at, offered_until
            FROM waiting_places WHERE \(condition) ORDER BY kind, thing, detail, seq
            """
        ).all().compactMap { row in
            guard let kind = WaitingKind(rawValue: try row.decode(column: "kind", as: String.self)) else { return nil }
            return WaitingPlace(
                id: try row.decode(column: "id", as: String.self), kind: kind,
                thing: try row.decode(column: "thing", as: String.self),
                detail: try row.decode(column: "detail", as: String.self),
                owner: try row.decode(column: "owner", as: String.self),
                name: try row.decode(column: "name", as: String.self),
                label: try row.decode(column: "label", as: String.self),
                seq: try row.decode(column: "seq", as: Int.self),
                joinedAt: Timestamp.date(try row.decode(column: "joined_at", as: String.self)) ?? .distantPast,
                offeredUntil: try row.decode(column: "offered_until", as: Int?.self).map {
                    Date(timeIntervalSince1970: Double($0))
                })
        }
    }
}
