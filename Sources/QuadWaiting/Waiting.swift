import Foundation
import QuadCore
import QuadPlatform
import QuadWaitingLines
import ServiceLifecycle

/// The Waiting feature: what a person is told about (their offers, places in line, loans due, the reminders they
/// get) on `/notifications` and `GET /api/me/notifications`, accepting and leaving, and the admins' view of every
/// line (`/admin/waiting`). The lines themselves are the engine's (`WaitingLists`), which Rooms and the Library
/// keep inside their own transactions; this feature reads them and asks the feature that keeps a line to act.
package final class Waiting: Feature, PersonReminders {
    package let lines: WaitingLists
    let platform: Platform
    /// A person's loans (the Library) and the campus's time zone (the Timetable), for the notifications page and
    /// the calendar's reminders.
    let loans: any PersonLoans
    let campus: any CampusTime

    package init(platform: Platform, lines: WaitingLists, loans: any PersonLoans, campus: any CampusTime) {
        self.platform = platform
        self.lines = lines
        self.loans = loans
        self.campus = campus
    }

    /// The engine's tables (`waiting_places`, `reminders_off`; `notices`), migrations 6 and 7.
    package static var migrations: [Migration] { [WaitingLists.migration, WaitingLists.noticesMigration] }

    package var adminLinks: [AdminLink] { [AdminLink(title: "waiting.admin.title", path: "/admin/waiting")] }

    package static let files = WebFiles(module: "QuadWaiting", bundle: .module)
    /// The engine's message: an offer (its template, `mail-offer`, is this feature's).
    package static var letters: [LetterWriter] { [WaitingLists.offerLetter.writer] }

    var clock: any QuadClock { platform.clock }

    package func register(on routes: Routes, web: WebShell) throws {
        NotificationsRoutes(waiting: self, web: web, refreshSeconds: platform.configuration.refreshSeconds)
            .register(on: routes)
        try WaitingOperations(waiting: self).registerHandlers(
            on: routes.router, configuration: .quad, middlewares: .quad())
    }

    /// Passes on the offers nobody took, every minute.
    package var services: [any Service] { [WaitingKeeper.every(minute: lines, logger: platform.logger)] }
}
