import Foundation
import QuadCore
import QuadPlatform

/// What Quad mailed a person lately, newest first, as their account page shows it (and an admin's page of theirs,
/// for support): when, what about, and whether it went. The outbox keeps it for 90 days.
struct MailRecord {
    struct Line {
        let subject: String
        let when: String
        let state: String
        let stateText: String
    }

    let lines: [Line]
    let any: Bool
    /// More than the page shows.
    let more: String?

    static let shown = 20

    init(_ sent: [Outbox.Sent], t: Localizer, now: Date) {
        // Times on UTC's clock, as the rest of the account page (Accounts knows no campus).
        let clock = CampusClock(timeZone: TimeZone(identifier: "UTC")!)
        lines = sent.prefix(Self.shown).map {
            Line(
                subject: $0.subject, when: t.instant($0.sentAt ?? $0.createdAt, now: now, clock: clock) + " UTC",
                state: $0.state, stateText: t("account.record.\($0.state)"))
        }
        any = !sent.isEmpty
        more = sent.count > Self.shown ? t("account.record.more", count: sent.count - Self.shown) : nil
    }
}
