import Foundation
import QuadCore
import SQLKit

/// A person's loans (Library), for their notifications and their calendar's reminders.
package protocol PersonLoans: Sendable {
    func loans(of username: String) async throws -> [PersonLoan]
}

package struct PersonLoan: Sendable, Equatable {
    package var bookId: Int
    package var title: String
    package var dueAt: Date

    package init(bookId: Int, title: String, dueAt: Date) {
        self.bookId = bookId
        self.title = title
        self.dueAt = dueAt
    }
}

/// Everything a person is told about, in one place (`/notifications`, `GET /api/me/notifications`).
package struct Notifications: Sendable {
    /// Offers theirs to take now, soonest ending first.
    package var offers: [WaitingPlace]
    /// Places in line without an offer, with where they stand.
    package var waiting: [(place: WaitingPlace, position: Int)]
    /// Loans, soonest due first, with where each stands.
    package var loans: [(loan: PersonLoan, standing: LoanStanding)]
    /// The reminders they turned off.
    package var off: Set<ReminderKind>
    package var clock: CampusClock
}

extension WaitingLists {
    /// The reminder kinds `owner` turned off.
    package func remindersOff(of owner: String) async throws -> Set<ReminderKind> {
        try await database.read { sql in
            Set(
                try await sql.raw("SELECT kind FROM reminders_off WHERE owner = \(bind: owner.lowercased())").all()
                    .compactMap { ReminderKind(rawValue: try $0.decode(column: "kind", as: String.self)) })
        }
    }

    /// Turns off exactly the kinds in `off` for `owner`, in one transaction.
    package func setRemindersOff(_ off: Set<ReminderKind>, for owner: String) async throws {
        let key = owner.lowercased()
        try await database.transaction { sql in
            try await sql.raw("DELETE FROM reminders_off WHERE owner = \(bind: key)").run()
            for kind in off.sorted(by: { $0.rawValue < $1.rawValue }) {
                try await sql.raw(
                    "INSERT INTO reminders_off (owner, kind) VALUES (\(bind: key), \(bind: kind.rawValue))"
                )
                .run()
            }
        }
    }

    /// The campus's wall clock (the Timetable's time zone; the server's own before Library and Timetable connect).
    func campusClock() async -> CampusClock {
        guard let campus = sources.withLockedValue({ $0?.campus }) else { return CampusClock(timeZone: .current) }
        return CampusClock(timeZone: await campus.timeZone())
    }

    /// `person`'s offers, places in line and loans, as of now.
    package func notifications(of username: String) async throws -> Notifications {
        let now = clock.now
        let clock = await campusClock()
        let places = try await places(of: username)
        let loans = try await sources.withLockedValue({ $0?.loans })?.loans(of: username) ?? []
        return Notifications(
            offers: places.map(\.place).filter { $0.holdsOffer(at: now) }
                .sorted { ($0.offeredUntil!, $0.id) < ($1.offeredUntil!, $1.id) },
            waiting: places.filter { !$0.place.holdsOffer(at: now) },
            loans: loans.sorted { ($0.dueAt, $0.bookId) < ($1.dueAt, $1.bookId) }.map {
                ($0, LoanStanding(dueAt: $0.dueAt, now: now, clock: clock))
            },
            off: try await remindersOff(of: username), clock: clock)
    }

    /// What `username`'s calendar reminds them of: their live offers' ends and their loans' due dates, less the
    /// kinds they turned off.
    package func calendarReminders(of username: String) async throws -> [CalendarReminder] {
        let now = clock.now
        let notifications = try await notifications(of: username)
        let off = notifications.off
        var reminders: [CalendarReminder] = []
        if !off.contains(.offers) {
            reminders += notifications.offers.compactMap { CalendarReminder.offer($0, now: now) }
        }
        for (loan, _) in notifications.loans {
            reminders += CalendarReminder.loan(
                id: String(loan.bookId), title: loan.title, dueAt: loan.dueAt, clock: notifications.clock, off: off)
        }
        return reminders
    }
}
