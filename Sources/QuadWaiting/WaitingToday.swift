import Foundation
import QuadCore
import QuadPlatform

/// Waiting's part of a person's day: the offers held for them (first on the page, each with its countdown, Accept and
/// Decline), their places in line, and their loans due soon or overdue (with Return). Visitors have none.
extension Waiting: TodayPart {
    /// Places in line, notices and loans.
    package var todayChanges: [HubChange] { [.event(.waiting), .event(.notice), .event(.book)] }

    package func today(for person: Person?, at now: Date, t: Localizer) async throws -> [TodaySection] {
        guard let person else { return [] }
        let notes = try await notifications(of: person.username)
        let offers = notes.offers.map { place in
            TodayItem(
                id: place.id, title: place.label,
                detail: t("notifications.until", ["time": notes.said(place.offeredUntil!, now: now, t: t)]),
                path: "/notifications", endsAt: place.offeredUntil, needsYou: true,
                actions: [
                    TodayAction(
                        kind: .accept, label: t("notifications.accept"), form: "/notifications/\(place.id)/accept",
                        method: .post, api: "/api/offers/\(place.id)/accept"),
                    TodayAction(
                        kind: .decline, label: t("notifications.decline"), form: "/notifications/\(place.id)/leave",
                        method: .delete, api: "/api/me/waiting/\(place.id)"),
                ])
        }
        let places = notes.waiting.map { place, position in
            TodayItem(
                id: place.id, title: place.label,
                detail: t(
                    "notifications.today.waiting.detail",
                    [
                        "kind": t("waiting.kind.\(place.kind.rawValue)"),
                        "position": t("waiting.position", ordinal: position),
                    ]),
                path: "/notifications",
                actions: [
                    TodayAction(
                        kind: .leave, label: t("notifications.leave"), form: "/notifications/\(place.id)/leave",
                        method: .delete, api: "/api/me/waiting/\(place.id)")
                ])
        }
        // Loans on time for days yet are not news: they stay on the notifications page.
        let loans = notes.loans.filter { $0.standing != .onLoan }.map { loan, standing in
            TodayItem(
                id: String(loan.bookId), title: loan.title,
                detail: t(
                    "notifications.today.loans.detail",
                    [
                        "due": t("notifications.due", ["date": notes.said(loan.dueAt, now: now, t: t)]),
                        "standing": t("notifications.standing.\(standing.rawValue)"),
                    ]),
                path: "/library/books/\(loan.bookId)", endsAt: loan.dueAt, needsYou: standing == .overdue,
                actions: [
                    TodayAction(
                        kind: .returnBook, label: t("notifications.returnBook"),
                        form: "/library/books/\(loan.bookId)/return", method: .post,
                        api: "/api/books/\(loan.bookId)/return")
                ])
        }
        // What changed without them counts on the badge until they have read it and dismissed it.
        let notices = notes.notices.map { notice in
            TodayItem(
                id: notice.id, title: notice.sentence(t, clock: notes.clock), path: "/notifications",
                needsYou: true,
                actions: [
                    TodayAction(
                        kind: .dismiss, label: t("notices.dismiss"),
                        form: "/notifications/notices/\(notice.id)/dismiss",
                        method: .delete, api: "/api/me/notices/\(notice.id)")
                ])
        }
        let more = TodayLink(label: t("notifications.today.more"), path: "/notifications")
        // Shown only while there is one: "nothing changed" is not news.
        let noticeSection =
            notices.isEmpty
            ? []
            : [
                TodaySection(
                    key: .notices, title: t("notices.today.title"), empty: t("notices.today.empty"), items: notices)
            ]
        return noticeSection + [
            TodaySection(
                key: .offers, title: t("notifications.today.offers.title"),
                empty: t("notifications.today.offers.empty"), items: offers),
            TodaySection(
                key: .waiting, title: t("notifications.today.waiting.title"),
                empty: t("notifications.today.waiting.empty"), more: more,
                items: places),
            TodaySection(
                key: .loans, title: t("notifications.today.loans.title"), empty: t("notifications.today.loans.empty"),
                items: loans),
        ]
    }
}

/// What of Waiting's needs the person now (the badge on every page): the offers held for them, the notices they have not
/// dismissed, and their overdue loans.
extension Waiting: AttentionPart {
    package var attention: (any AttentionPart)? { self }

    package func attention(for person: Person, at now: Date) async throws -> Attention {
        let offers = try await lines.places(of: person.username).map(\.place).filter { $0.holdsOffer(at: now) }
        let loans = try await self.loans.loans(of: person.username)
        let notices = try await lines.notices(of: person.username)
        let clock = await campusClock()
        return Attention(
            count: offers.count + notices.count
                + loans.filter { LoanStanding(dueAt: $0.dueAt, now: now, clock: clock) == .overdue }.count,
            offers: offers.map { Attention.HeldOffer(id: $0.id, label: $0.label, until: $0.offeredUntil!) },
            // An offer ends; a loan falls overdue.
            changesAt: Attention.next(offers.map(\.offeredUntil) + loans.map(\.dueAt), after: now))
    }
}
