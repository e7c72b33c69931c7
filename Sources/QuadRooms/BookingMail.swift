import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Mail about a person's bookings in time, each with its calendar invitation (iMIP): made, cancelled (one date, or a
/// series' rest), released because nobody checked in. Queued in the transaction of the change with what it is written
/// from (`BookingNote`), written by the courier; each booking's (or series') revisions after its first are counted in
/// `room_invitations`, its invitations' `SEQUENCE`, so a calendar keeps the latest.
extension ReservationStore {
    static let invitationsMigration = Migration(
        id: 106, name: "booking invitations' revisions",
        statements: ["CREATE TABLE room_invitations (uid TEXT PRIMARY KEY, sequence INTEGER NOT NULL)"])

    /// What happened to a booking.
    enum BookingNews: String, Codable {
        case booked, cancelled, released
        /// A series cancelled from one date on.
        case cancelledFrom
        /// Ended because an admin removed its room.
        case roomRemoved
        /// Its room given a new name by an admin: the invitation's next revision says it.
        case roomRenamed

        var kind: MailKind {
            switch self {
            case .booked: .booked
            case .roomRenamed: .changed
            case .cancelled, .cancelledFrom, .roomRemoved: .cancelled
            case .released: .released
            }
        }
    }

    /// What a booking's message is written from, as the change left it: the news, the calendar entry (as it is after
    /// the change, or as it was when nothing of it is left: `cancel`), the one date of a series concerned, whether the
    /// series' other dates stand (`rest`), the invitation's revision and stamp, and the campus's time zone.
    struct BookingNote: Codable, Sendable {
        let news: BookingNews
        let entry: CalendarBooking
        let cancel: Bool
        let date: LocalDate?
        let rest: Bool
        let sequence: Int
        let stamp: Date
        let timeZone: String
    }

    /// A booking's message, with its calendar invitation (iMIP).
    static let bookingLetter = LetterKind<BookingNote>("booking") { note, mail in
        let t = mail.t
        let when = ReservationStore.when(note.entry, date: note.date, t: t)
        let model = BookingLetter(
            greeting: t("mail.greeting", ["name": mail.to.name]),
            news: t("mail.booking.\(note.news.rawValue).body", ["summary": note.entry.summary, "when": when]),
            rest: note.rest ? t("mail.booking.rest") : nil,
            calendar: t(note.cancel ? "mail.booking.calendarOut" : "mail.booking.calendarIn"),
            bookings: mail.link("/rooms#my-bookings"), why: t("mail.booking.why"), stop: mail.stop)
        return Letter(
            subject: t("mail.booking.\(note.news.rawValue).subject", ["summary": note.entry.summary, "when": when]),
            paragraphs: [model.greeting, model.news] + [model.rest].compactMap { $0 } + [
                model.calendar, t("mail.booking.seeAt") + "\n" + model.bookings,
            ],
            template: "mail-booking", model: model,
            why: model.why + "\n" + t("mail.stopAt") + " " + model.stop,
            invitation: ICalendar.invitation(
                note.entry, cancel: note.cancel, sequence: note.sequence,
                organizer: .init(name: t("app.name"), address: mail.from),
                attendee: .init(name: mail.to.name, address: mail.to.address),
                timeZone: TimeZone(identifier: note.timeZone) ?? .gmt, stamp: note.stamp))
    }

    /// Tells `owner` of `news` about a booking or a series: its calendar entry `after` the change (nil when nothing of
    /// it is left: the invitation then cancels the entry as it was `before`). `date`: the one date of a series
    /// concerned. True when a message was queued.
    func mailBooking(
        _ news: BookingNews, to owner: String, before: CalendarBooking?, after: CalendarBooking?,
        date: LocalDate? = nil, _ sql: any SQLDatabase, campus: CampusClock
    ) async throws -> Bool {
        guard mail.isOn, let entry = after ?? before else { return false }
        // A booking's first message is its invitation's first revision: nothing to count yet.
        let sequence = news == .booked ? 0 : try await Self.nextSequence(entry.uid, sql)
        let note = BookingNote(
            news: news, entry: entry, cancel: after == nil, date: date,
            rest: date != nil && after != nil && news != .cancelledFrom, sequence: sequence, stamp: clock.now,
            timeZone: campus.timeZone.identifier)
        return try await mail.send(news.kind, to: owner, letter: Self.bookingLetter, note, sql)
    }

    /// A booking made (one, a series' first date, an offer taken): its owner is told, with the invitation. `names`:
    /// its room's name and building, when the caller has them.
    func mailBooked(
        _ reservation: Reservation, names: [String: (String, String)]? = nil, _ sql: any SQLDatabase,
        campus: CampusClock
    ) async throws -> Bool {
        guard mail.isOn else { return false }
        return try await mailBooking(
            .booked, to: reservation.owner, before: nil,
            after: try await Self.entry(of: reservation, names: names, sql, campus: campus), sql, campus: campus)
    }

    /// The next revision of `uid`'s invitation after its first (0, sent when it was booked, and counted by no row).
    static func nextSequence(_ uid: String, _ sql: any SQLDatabase) async throws -> Int {
        try await sql.raw(
            """
            INSERT INTO room_invitations (uid, sequence) VALUES (\(bind: uid), 1)
            ON CONFLICT (uid) DO UPDATE SET sequence = room_invitations.sequence + 1
            RETURNING sequence
            """
        ).first()?.decode(column: "sequence", as: Int.self) ?? 1
    }

    /// When, as the message says it: "Tuesday 1 December 2026, 12:45–13:15", a series' first date and its rule, or
    /// the one `date` concerned.
    static func when(_ entry: CalendarBooking, date: LocalDate?, t: Localizer) -> String {
        let end = entry.start.minutes + entry.minutes
        // Not a `LocalTime`: a booking may end at 24:00.
        let endText = String(format: "%02d:%02d", end / 60, end % 60)
        let hours = "\(entry.start.description)–\(endText)"
        let day = t("time.dayAndTime", ["date": t.longDate(date ?? entry.first), "time": hours])
        guard date == nil, let rule = entry.recurrence else { return day }
        return t("mail.booking.every.\(rule.frequency.rawValue)", ["when": day, "until": t.longDate(rule.until)])
    }

    /// A booking outside any series, or a series, as calendars show it now, in the caller's transaction.
    static func entry(
        of reservation: Reservation, names known: [String: (String, String)]? = nil, _ sql: any SQLDatabase,
        campus: CampusClock
    ) async throws
        -> CalendarBooking?
    {
        let names = if let known { known } else { try await roomNames(sql, only: reservation.roomId) }
        guard let seriesId = reservation.seriesId else { return entry(reservation, names: names, campus: campus) }
        guard let rule = try await seriesRules(sql, "id = \(bind: seriesId)").first else { return nil }
        return entry(rule, booked: try await select(sql, "series_id = \(bind: seriesId)"), names: names, campus: campus)
    }
}

/// A booking's message, as its HTML template (`mail-booking`) reads it.
struct BookingLetter {
    let greeting: String
    let news: String
    /// A series' other dates stand.
    let rest: String?
    /// What the invitation does to their calendar.
    let calendar: String
    /// Where their bookings are.
    let bookings: String
    let why: String
    let stop: String
}
