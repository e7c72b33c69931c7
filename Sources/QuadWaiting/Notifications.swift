import Foundation
import QuadCore
import QuadPlatform
import QuadWaitingLines

/// Everything a person is told about, in one place (`/notifications`, `GET /api/me/notifications`).
package struct Notifications: Sendable {
    /// Offers theirs to take now, soonest ending first.
    package var offers: [WaitingPlace]
    /// Places in line without an offer, with where they stand.
    package var waiting: [(place: WaitingPlace, position: Int)]
    /// Loans, soonest due first, with where each stands.
    package var loans: [(loan: PersonLoan, standing: LoanStanding)]
    /// What happened to their bookings and places that they did not do, newest first.
    package var notices: [Notice]
    /// The reminders they turned off.
    package var off: Set<ReminderKind>
    package var clock: CampusClock

    /// An instant as a person reads it: the time alone today, the day and the time another day.
    func said(_ instant: Date, now: Date, t: Localizer) -> String { t.instant(instant, now: now, clock: clock) }

    /// When what the page says of these changes by itself after `now`: an offer ends, a loan falls due, or the next
    /// day on the campus's clock (days are said as "today", "tomorrow", and loans are due soon or today by the day).
    func changesAt(after now: Date) -> Date? {
        Attention.next([clock.nextDay(after: now)] + offers.map(\.offeredUntil) + loans.map(\.loan.dueAt), after: now)
    }
}

extension Waiting {
    /// The campus's wall clock (the Timetable's time zone).
    func campusClock() async -> CampusClock { CampusClock(timeZone: await campus.timeZone()) }

    /// `person`'s offers, places in line and loans, as of now.
    package func notifications(of username: String) async throws -> Notifications {
        let now = clock.now
        let clock = await campusClock()
        let places = try await lines.places(of: username)
        let loans = try await self.loans.loans(of: username)
        return Notifications(
            offers: places.map(\.place).filter { $0.holdsOffer(at: now) }
                .sorted { ($0.offeredUntil!, $0.id) < ($1.offeredUntil!, $1.id) },
            waiting: places.filter { !$0.place.holdsOffer(at: now) },
            loans: loans.sorted { ($0.dueAt, $0.bookId) < ($1.dueAt, $1.bookId) }.map {
                ($0, LoanStanding(dueAt: $0.dueAt, now: now, clock: clock))
            },
            notices: try await lines.notices(of: username), off: try await lines.remindersOff(of: username),
            clock: clock)
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
