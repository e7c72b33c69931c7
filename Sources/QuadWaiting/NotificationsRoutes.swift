import Foundation
import Hummingbird
import QuadCore
import QuadPlatform
import QuadWaitingLines

/// `/notifications`: a person's offers (accept in one tap, or decline), their places in line (leave), their loans
/// due and overdue, and which reminders they get; `/admin/waiting`: every line, and taking someone out of one.
/// Forms work without JavaScript; `notifications.js` keeps the page live on the person's own `waiting` events.
struct NotificationsRoutes {
    let waiting: Waiting
    let web: WebShell
    let refreshSeconds: Int

    func register(on routes: Routes) {
        routes.on(.get, "/notifications", .member) { request, _ in try await self.page(request) }
        routes.on(.post, "/notifications/:placeId/accept", .owner) { request, context in
            try await self.accept(request, placeId: try Self.placeId(context))
        }
        routes.on(.post, "/notifications/:placeId/leave", .owner) { request, context in
            try await self.leave(try Self.placeId(context))
        }
        routes.on(.post, "/notifications/notices/:noticeId/dismiss", .owner) { _, context in
            try await self.dismiss(try Self.noticeId(context))
        }
        routes.on(.post, "/notifications/reminders", .member) { request, _ in try await self.setReminders(request) }
        routes.on(.get, "/admin/waiting", .admin) { request, _ in try await self.adminPage(request) }
        routes.on(.post, "/admin/waiting/:placeId/remove", .admin) { request, context in
            try await self.waiting.lines.remove(try Self.placeId(context).value)
            return Response.seeOther("/admin/waiting?done=removed")
        }
    }

    static func placeId(_ context: AppRequestContext) throws -> PlaceID {
        guard let id = PlaceID(context.parameters.get("placeId")) else {
            throw Problem.notFound("There is no such place in line.")
        }
        return id
    }

    static func noticeId(_ context: AppRequestContext) throws -> NoticeID {
        guard let id = NoticeID(context.parameters.get("noticeId")) else {
            throw Problem.notFound("You have no such notice.")
        }
        return id
    }

    static let scriptStrings = ScriptStrings(["notifications.live"])

    func page(
        _ request: Request, status: HTTPResponse.Status = .ok, failure: String? = nil
    ) async throws -> Response {
        let person = try Access.person()
        let notes = try await waiting.notifications(of: person.username)
        let now = waiting.clock.now
        let query = request.uri.queryParameters
        return try web.page(
            request, template: "notifications", status: status, title: { $0("notifications.title") },
            strings: Self.scriptStrings, fragments: ["live": "notifications-live"],
            keptUntilChangeOf: [.event(.waiting), .event(.notice), .event(.book), WaitingLists.remindersChange]
                + waiting.campus.changes,
            keptUntil: { _ in notes.changesAt(after: now) }
        ) { t in
            NotificationsPage(
                notes, now: now, t: t, refreshSeconds: refreshSeconds,
                notice: failure.map { .init(kind: "error", text: $0) }
                    ?? Self.done[query.get("done") ?? ""].map { .init(kind: "success", text: t($0)) })
        }
    }

    /// What the last form did (`?done=`), by the string that says so.
    static let done = [
        "saved": "notifications.saved", "left": "notifications.left", "dismissed": "notices.dismissed",
    ]

    /// Takes the offer; on to the page that shows what it gave.
    func accept(_ request: Request, placeId: PlaceID) async throws -> Response {
        let person = try Access.person()
        do {
            let accepted = try await waiting.lines.accept(placeId.value, by: person)
            return .seeOther(accepted.path)
        } catch let problem as Problem where problem.status == .conflict || problem.status == .notFound {
            let t = Localizer(language: web.language(for: request))
            return try await page(request, status: problem.status, failure: t("notifications.offerEnded"))
        }
    }

    func leave(_ placeId: PlaceID) async throws -> Response {
        do {
            try await waiting.lines.leave(placeId.value, by: try Access.person())
        } catch let problem as Problem where problem.status == .notFound {
            // Gone already (the offer passed on, or another tab left): nothing to do.
        }
        return .seeOther("/notifications?done=left")
    }

    func dismiss(_ noticeId: NoticeID) async throws -> Response {
        do {
            try await waiting.lines.dismiss(noticeId.value, by: try Access.person())
        } catch let problem as Problem where problem.status == .notFound {
            // Gone already (another tab dismissed it): nothing to do.
        }
        return .seeOther("/notifications?done=dismissed")
    }

    /// Each kind's box ticked is on; the form sends every kind's box (`name=on`), the ones left unticked are off.
    func setReminders(_ request: Request) async throws -> Response {
        let person = try Access.person()
        var request = request
        let fields = try await request.formFields()
        let off = Set(ReminderKind.allCases.filter { fields[$0.rawValue] != "on" })
        try await waiting.lines.setRemindersOff(off, for: person.username)
        return .seeOther("/notifications?done=saved")
    }

    func adminPage(_ request: Request) async throws -> Response {
        let lines = try await waiting.lines.lines()
        let removed = request.uri.queryParameters.get("done") == "removed"
        return try web.page(request, template: "waiting-admin", title: { $0("waiting.admin.title") }) { t in
            WaitingAdminPage(
                lines: lines.map { line in
                    .init(
                        label: line.places[0].label, kind: t("waiting.kind.\(line.places[0].kind.rawValue)"),
                        people: line.places.enumerated().map { index, place in
                            .init(
                                id: place.id, name: place.name, username: place.owner,
                                position: t("waiting.position", ordinal: index + 1),
                                offered: place.offeredUntil != nil)
                        })
                },
                removed: removed ? t("waiting.admin.removed") : nil)
        }
    }
}

/// What `/notifications` shows, drawn by the server in the person's language.
struct NotificationsPage {
    struct Offer {
        let id: String
        let label: String
        let kindText: String
        let untilText: String
        /// When it ends, in milliseconds: the page greys it out then (`data-live-until`).
        let untilMs: Int
    }

    struct Place {
        let id: String
        let label: String
        let kindText: String
        let positionText: String
    }

    struct LoanItem {
        let bookId: Int
        let title: String
        let path: String
        let dueText: String
        let standing: String
        let standingText: String
    }

    struct NoticeItem {
        let id: String
        let text: String
        let atText: String
    }

    struct Reminder {
        let kind: String
        let label: String
        let on: Bool
    }

    struct Notice {
        let kind: String
        let text: String
    }

    let notices: [NoticeItem]
    let offers: [Offer]
    let waiting: [Place]
    let loans: [LoanItem]
    let reminders: [Reminder]
    let hasNotices: Bool
    let hasOffers: Bool
    let hasWaiting: Bool
    let hasLoans: Bool
    let nothing: Bool
    let notice: Notice?
    let refreshSeconds: Int
    let generatedAt: Int

    init(_ notes: Notifications, now: Date, t: Localizer, refreshSeconds: Int, notice: Notice?) {
        func when(_ instant: Date) -> String { notes.said(instant, now: now, t: t) }
        notices = notes.notices.map {
            NoticeItem(id: $0.id, text: $0.sentence(t, clock: notes.clock), atText: when($0.at))
        }
        offers = notes.offers.map {
            Offer(
                id: $0.id, label: $0.label, kindText: t("waiting.kind.\($0.kind.rawValue)"),
                untilText: t("notifications.until", ["time": when($0.offeredUntil!)]),
                untilMs: Int($0.offeredUntil!.timeIntervalSince1970 * 1000))
        }
        waiting = notes.waiting.map {
            Place(
                id: $0.place.id, label: $0.place.label, kindText: t("waiting.kind.\($0.place.kind.rawValue)"),
                positionText: t("waiting.position", ordinal: $0.position))
        }
        loans = notes.loans.map { loan, standing in
            LoanItem(
                bookId: loan.bookId, title: loan.title, path: "/library/books/\(loan.bookId)",
                dueText: t("notifications.due", ["date": when(loan.dueAt)]), standing: standing.rawValue,
                standingText: t("notifications.standing.\(standing.rawValue)"))
        }
        reminders = ReminderKind.allCases.map {
            Reminder(kind: $0.rawValue, label: t("notifications.reminder.\($0.rawValue)"), on: !notes.off.contains($0))
        }
        hasNotices = !notices.isEmpty
        hasOffers = !offers.isEmpty
        hasWaiting = !waiting.isEmpty
        hasLoans = !loans.isEmpty
        nothing = notices.isEmpty && offers.isEmpty && waiting.isEmpty && loans.isEmpty
        self.notice = notice
        self.refreshSeconds = refreshSeconds
        generatedAt = Int(now.timeIntervalSince1970 * 1000)
    }
}

/// What `/admin/waiting` shows: each line in order, with a button to take someone out.
struct WaitingAdminPage {
    struct Line {
        let label: String
        let kind: String
        let people: [Person]
    }

    struct Person {
        let id: String
        let name: String
        let username: String
        let position: String
        /// An offer is theirs to take (live or just ended).
        let offered: Bool
    }

    let lines: [Line]
    let removed: String?
}
