import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Mail about a person's bookings in time, each with its calendar invitation (iMIP): made, cancelled (one date, or a
/// series' rest), released because nobody checked in. Queued in the transaction of the change; each booking's (or
/// series') revisions are counted in `room_invitations`, its invitations' `SEQUENCE`, so a calendar keeps the latest.
extension ReservationStore {
    static let invitationsMigration = Migration(
        id: 106, name: "booking invitations' revisions",
        statements: ["CREATE TABLE room_invitations (uid TEXT PRIMARY KEY, sequence INTEGER NOT NULL)"])

    /// What happened to a booking.
    enum BookingNews: String {
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

    /// Tells `to` of `news` about a booking or a series: its calendar entry `after` the change (nil when nothing of it
    /// is left: the invitation then cancels the entry as it was `before`). `date`: the one date of a series concerned.
    /// True when a message was queued.
    func mailBooking(
        _ news: BookingNews, to: MailRecipient, before: CalendarBooking?, after: CalendarBooking?,
        date: LocalDate? = nil, _ sql: any SQLDatabase, campus: CampusClock
    ) async throws -> Bool {
        guard let entry = after ?? before else { return false }
        let sequence = try await Self.nextSequence(entry.uid, sql)
        let stamp = clock.now
        return try await mail.send(news.kind, to: to, sql) { mail in
            let t = mail.t
            let when = Self.when(entry, date: date, t: t)
            let model = BookingLetter(
                greeting: t("mail.greeting", ["name": to.name]),
                news: t("mail.booking.\(news.rawValue).body", ["summary": entry.summary, "when": when]),
                rest: date != nil && after != nil && news != .cancelledFrom ? t("mail.booking.rest") : nil,
                calendar: t(after == nil ? "mail.booking.calendarOut" : "mail.booking.calendarIn"),
                bookings: mail.link("/rooms#my-bookings"), why: t("mail.booking.why"), stop: mail.stop)
            return Letter(
                subject: t("mail.booking.\(news.rawValue).subject", ["summary": entry.summary, "when": when]),
                paragraphs: [model.greeting, model.news] + [model.rest].compactMap { $0 } + [
                    model.calendar, t("mail.booking.seeAt") + "\n" + model.bookings,
                ],
                template: "mail-booking", model: model,
                why: model.why + "\n" + t("mail.stopAt") + " " + model.stop,
                invitation: ICalendar.invitation(
                    entry, cancel: after == nil, sequence: sequence,
                    organizer: .init(name: t("app.name"), address: mail.from),
                    attendee: .init(name: to.name, address: to.address), timeZone: campus.timeZone, stamp: stamp))
        }
    }

    /// A booking made (one, a series' first date, an offer taken): its owner is told, with the invitation.
    func mailBooked(_ reservation: Reservation, _ sql: any SQLDatabase, campus: CampusClock) async throws -> Bool {
        guard let to = try await mail.recipient(reservation.owner, for: .booked, sql) else { return false }
        return try await mailBooking(
            .booked, to: to, before: nil, after: try await Self.entry(of: reservation, sql, campus: campus), sql,
            campus: campus)
    }

    /// The next revision of `uid`'s invitation: 0 for the first.
    static func nextSequence(_ uid: String, _ sql: any SQLDatabase) async throws -> Int {
        try await sql.raw(
            """
            INSERT INTO room_invitations (uid, sequence) VALUES (\(bind: uid), 0)
            ON CONFLICT (uid) DO UPDATE SET sequence = room_invitations.sequence + 1
            RETURNING sequence
            """
        ).first()?.decode(column: "sequence", as: Int.self) ?? 0
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
        of reservation: Reservation, _ sql: any SQLDatabase, campus: CampusClock
    ) async throws
        -> CalendarBooking?
    {
        let names = try await roomNames(sql, only: reservation.roomId)
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
