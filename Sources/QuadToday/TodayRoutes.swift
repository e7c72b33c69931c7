import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// `/`: a signed-in person's day, every section drawn by the server (forms work without JavaScript; `today.js` keeps
/// it live on their events and counts down what is held for them); a visitor's short public home.
struct TodayRoutes {
    let today: TodayFeature
    let web: WebShell
    let refreshSeconds: Int

    func register(on routes: Routes) {
        routes.on(.get, "/", .public) { request, _ in try await self.page(request) }
    }

    /// When a day as drawn goes stale by itself: at the next minute ("in 25 minutes", "Today" turning into
    /// yesterday at midnight), or sooner at an item's start or end (an offer's, a check-in's). Why keep it at all:
    /// measured with `Benchmarks/run`, drawing a student's day took 5.8 ms of CPU.
    static func staleAt(_ day: Today) -> Date {
        let now = day.generatedAt
        let nextMinute = Date(timeIntervalSince1970: ((now.timeIntervalSince1970 / 60).rounded(.down) + 1) * 60)
        let deadlines = day.sections.flatMap(\.items).flatMap { [$0.startsAt, $0.endsAt] }.compactMap { $0 }
        return ([nextMinute] + deadlines.filter { $0 > now }).min()!
    }

    /// What `today.js` says: the live announcement (the countdown's words are on every page, `ScriptStrings`).
    static let scriptStrings = ScriptStrings(["today.live"])

    func page(_ request: Request) async throws -> Response {
        let language = web.language(for: request)
        let person = RequestInfo.current.person
        let day = try await today.day(for: person, t: Localizer(language: language))
        // Kept (`PageCache`) until a change the parts show, or until it goes stale by itself.
        let changes = today.changes
        let staleAt = Self.staleAt(day)
        guard let person else {
            return try web.page(
                request, template: "home", title: { $0("home.title") }, keptUntilChangeOf: changes,
                keptUntil: { _ in staleAt }
            ) { t in
                HomePage(
                    servicesCount: web.serviceCount == 0 ? nil : t("home.services", count: web.serviceCount),
                    sections: day.sections.map { TodayPage.Section($0, now: day.generatedAt) })
            }
        }
        let campus = CampusClock(timeZone: await today.campus.timeZone())
        return try web.page(
            request, template: "today", title: { $0("today.title") }, strings: Self.scriptStrings,
            fragments: ["live": "today-live"], keptUntilChangeOf: changes, keptUntil: { _ in staleAt }
        ) { t in
            TodayPage(day, person: person, campus: campus, t: t, refreshSeconds: refreshSeconds)
        }
    }
}

/// What `/` shows a signed-in person: their day's sections as the features drew them, with the forms of their actions.
struct TodayPage {
    let heading: String
    let dateText: String
    /// "2 things need you" (none when nothing does).
    let needsYouText: String?
    let sections: [Section]
    let refreshSeconds: Int
    /// When the page was made (ms since 1970), for the freshness line.
    let generatedAt: Int

    struct Section {
        let key: String
        let title: String
        let empty: String
        let more: TodayLink?
        let items: [Item]
        let hasItems: Bool

        init(_ section: TodaySection, now: Date) {
            key = section.key.rawValue
            title = section.title
            empty = section.empty
            more = section.more
            items = section.items.map { Item($0, section: section.key, now: now) }
            hasItems = !items.isEmpty
        }
    }

    struct Item {
        /// Unique on the page (the live region keeps each item by it).
        let key: String
        let title: String
        let detail: String?
        let path: String?
        let image: String?
        let needsYou: Bool
        /// What its countdown counts to (ms since 1970), while still to come: the page asks again then.
        let endsAtMs: Int?
        /// It counts down to `endsAtMs` (an offer, a check-in): shown, and the item goes stale at the end, since what it
        /// offers to do ends with it.
        let countdown: Bool
        let actions: [Action]
        let hasActions: Bool

        init(_ item: TodayItem, section: TodaySection.Key, now: Date) {
            key = "\(section.rawValue)-\(item.id)"
            title = item.title
            detail = item.detail
            path = item.path
            image = item.image
            needsYou = item.needsYou
            endsAtMs = item.endsAt.flatMap { $0 > now ? $0.milliseconds : nil }
            countdown = item.needsYou && endsAtMs != nil
            actions = item.actions.enumerated().map { Action($1, primary: $0 == 0) }
            hasActions = !actions.isEmpty
        }
    }

    struct Action {
        let label: String
        let form: String
        /// The first, most likely one: drawn as the main button.
        let primary: Bool

        init(_ action: TodayAction, primary: Bool) {
            label = action.label
            form = action.form
            self.primary = primary
        }
    }

    init(_ day: Today, person: Person, campus: CampusClock, t: Localizer, refreshSeconds: Int) {
        heading = t("today.heading", ["name": person.displayName])
        dateText = t.longDate(campus.date(of: day.generatedAt))
        needsYouText = day.needsYou == 0 ? nil : t("today.needsYou", count: day.needsYou)
        sections = day.sections.map { Section($0, now: day.generatedAt) }
        self.refreshSeconds = refreshSeconds
        generatedAt = day.generatedAt.milliseconds
    }
}

/// A visitor's home: the services, how many, and the public parts of the day (what is free now, the specials).
struct HomePage {
    let servicesCount: String?
    let sections: [TodayPage.Section]
}
