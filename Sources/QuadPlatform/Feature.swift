import Foundation
import OpenAPIRuntime
import QuadCore
import SQLKit
import ServiceLifecycle

/// What a feature module (Rooms, Specials, Library, Timetable, Accounts, Waiting) gives the server. `QuadServer` builds
/// each on the platform and composes them; a feature sees the platform and QuadCore, never another feature.
/// What one needs from another is a narrow protocol the server hands it (`PersonDirectory`, `CampusTime`,
/// `PersonRemoval`).
package protocol Feature: Sendable {
    /// Its tables, numbered in its own range (Rooms 100, Specials 200, Library 300, Timetable 400, Accounts 500;
    /// the waiting lines' engine has 6, from when it was the platform's, and 7, its notices);
    /// the platform applies them before any feature is built.
    static var migrations: [Migration] { get }
    /// Where the navigation and the home page lead, for a feature with a page of its own.
    var link: ServiceLink? { get }
    /// Its pages' and mail's templates, scripts and styles, beside its code
    /// (`WebFiles(module: "QuadRooms", bundle: .module)`): known before it is built, for mail's templates
    /// (`MailTemplates`), which a feature is handed at construction.
    static var files: WebFiles { get }
    /// The messages it sends people (`LetterKind`), which the courier writes as they go, by name.
    static var letters: [LetterWriter] { get }
    /// Its pages and forms (each declaring who may use it) and its operations of the generated interface.
    func register(on routes: Routes, web: WebShell) throws
    /// What runs beside the server.
    var services: [any Service] { get }
    /// Loads its demo data into a database just created.
    func loadDemoData(announce: @escaping @Sendable (String) -> Void) async throws
    /// The answers of its operations it keeps between changes (each declared once: `KeptAnswer`); the server answers
    /// them before the router (`FastPath`) and in the generated interface (`.quad(kept:)`).
    var keptAnswers: [any AnyKeptAnswer] { get }
    /// The original app's own file names under a personal app link, as Quad's paths (`/api/rooms.json` is
    /// `/api/rooms`): its app appends them to the link (`AppLinkPath`).
    var appLinkPaths: [String: String] { get }
    /// Its share of what needs a signed-in person now (the badge and the held offers on every page).
    var attention: (any AttentionPart)? { get }
    /// Its pages for admins, listed on `/admin`.
    var adminLinks: [AdminLink] { get }
    /// What an admin imports and exports of it as CSV (`RecordFiles`).
    var recordSets: [any RecordSet] { get }
    /// What an admin exports of it as an iCalendar file.
    var calendarExports: [any CalendarExport] { get }
}

/// An admin's page of a feature, as `/admin` lists it: its title (a localisation key) and path.
package struct AdminLink: Sendable {
    package let title: String
    package let path: String

    package init(title: String, path: String) {
        self.title = title
        self.path = path
    }
}

extension Feature {
    package var web: WebFiles { Self.files }
    package static var letters: [LetterWriter] { [] }
    package var link: ServiceLink? { nil }
    package var services: [any Service] { [] }
    package func loadDemoData(announce: @escaping @Sendable (String) -> Void) async throws {}
    package var keptAnswers: [any AnyKeptAnswer] { [] }
    package var appLinkPaths: [String: String] { [:] }
    package var attention: (any AttentionPart)? { nil }
    package var adminLinks: [AdminLink] { [] }
    package var recordSets: [any RecordSet] { [] }
    package var calendarExports: [any CalendarExport] { [] }
}

extension OpenAPIRuntime.Configuration {
    /// How every module's generated interface reads and writes dates and JSON.
    package static let quad = OpenAPIRuntime.Configuration(
        dateTranscoder: RFC3339Dates(), jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes])
}

extension Array where Element == any ServerMiddleware {
    /// The middleware every module's generated interface runs, with its feature's kept answers
    /// (`Feature.keptAnswers`, see `KeptAnswerMiddleware`).
    package static func quad(kept: [any AnyKeptAnswer] = []) -> [any ServerMiddleware] {
        [EmptyBodyAsNone()] + (kept.isEmpty ? [] : [KeptAnswerMiddleware(kept)])
    }
}

/// Who a credential signs in, as Accounts knows it; the access layer asks (`AccessMiddleware`).
package protocol PersonDirectory: Sendable {
    /// The person a personal app link acts for (nil when it is unknown or revoked).
    func person(appLink key: String) async throws -> Person?
    /// The person a session token signs in (nil when it is unknown or the session ended).
    func person(session token: String) async throws -> Person?
    /// What a session token is remembered by (its hash): `FastPath` works it out once for a connection's requests,
    /// which carry the same token.
    func sessionKey(token: String) -> String
    /// The person a session signs in, by its key (`sessionKey(token:)`), when this instance remembers it and may
    /// trust what it remembers, without waiting (for `FastPath`). Nil means "ask `person(session:)`", not "nobody".
    func rememberedPerson(sessionKey: String) -> Person?
    /// The administrator the admin token acts as.
    func tokenAdmin() async throws -> Person?
}

/// What another feature does when Accounts removes a person (Rooms releases their bookings). It runs inside the
/// removal's transaction, so the person and what they held go together or not at all; what it returns runs once
/// the transaction is committed (announcing the change).
package protocol PersonRemoval: Sendable {
    func release(
        _ usernameKey: String, in sql: any SQLDatabase
    ) async throws -> @Sendable () async -> Void
}

/// The secrets a person's feeds are reached by (the Timetable's calendar addresses), ended by Accounts inside its
/// transaction when the person is removed, their password is reset, or a student id moves: `usernameKey`'s own
/// feed key is forgotten and each student record named gets a new key. Returns what to announce once committed.
package protocol PersonKeys: Sendable {
    func endKeys(
        of usernameKey: String?, studentIds: [String], in sql: any SQLDatabase
    ) async throws -> @Sendable () async -> Void
}

/// A person's room bookings as their calendar shows them (Rooms), for the Timetable's feed: one feed per person,
/// classes and bookings together.
package protocol PersonCalendar: Sendable {
    func calendarBookings(of username: String) async throws -> [CalendarBooking]
}

/// Whose account a student record is (Accounts), for the Timetable's feed.
package protocol StudentAccounts: Sendable {
    func username(ofStudent id: String) async throws -> String?
}

/// The campus's time zone, as the Timetable sets it (`/admin/timetable`); the Library shows dates in it.
package protocol CampusTime: Sendable {
    func timeZone() async -> TimeZone
    /// Inside the caller's transaction: the kept zone, else read on the caller's connection. (Waiting for another
    /// connection there could wait for ever, while every connection is held by a transaction waiting the same way.)
    func timeZone(_ sql: any SQLDatabase) async -> TimeZone
    /// The changes on the hub that announce another zone: a page showing times in it is kept until one of them.
    var changes: [HubChange] { get }
}

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

/// What a person's calendar reminds them of (Waiting: their offers' ends, their loans' due dates), for the
/// Timetable's feed.
package protocol PersonReminders: Sendable {
    func calendarReminders(of username: String) async throws -> [CalendarReminder]
}

/// A feature's part of a person's day (the Today page, `GET /api/me/today`): the sections it owns, drawn from its
/// own rules and tables, so Today reads no feature's tables and a new feature adds a section without touching another.
package protocol TodayPart: Sendable {
    /// Its sections for `person` (nil: a visitor, who sees only what is public) at `now`, said with `t`. None when it
    /// has nothing that concerns them (a timetable for someone who is not a student); a section with no items says
    /// so itself (`TodaySection.empty`).
    func today(for person: Person?, at now: Date, t: Localizer) async throws -> [TodaySection]
    /// The changes on the hub after which its sections may read otherwise (a page showing them is kept until one).
    var todayChanges: [HubChange] { get }
}
