import Foundation
import QuadCore
import QuadPlatform
import SQLKit

extension WaitingLists {
    /// Inside the transaction that makes the offer: tells its owner by mail what is held for them, until when, and
    /// where to accept it (their notifications, which ask them to sign in first if they are not). True when a message
    /// was queued.
    func mailOffer(_ place: WaitingPlace, now: Date, _ sql: any SQLDatabase) async throws -> Bool {
        guard let until = place.offeredUntil else { return false }
        let clock = CampusClock(timeZone: await campus.timeZone(sql))
        return try await mail.send(.offer, to: place.owner, sql) { mail in
            let t = mail.t
            let when = t.instant(until, now: now, clock: clock)
            let model = OfferLetter(
                greeting: t("mail.greeting", ["name": mail.to.name]),
                held: t("mail.offer.held", ["label": place.label, "kind": t("waiting.kind.\(place.kind.rawValue)")]),
                until: t("mail.offer.until", ["time": when]), accept: mail.link("/notifications#offers"),
                why: t("mail.offer.why"), stop: mail.stop)
            return Letter(
                subject: t("mail.offer.subject", ["label": place.label, "time": when]),
                paragraphs: [
                    model.greeting, model.held, model.until, t("mail.offer.acceptAt") + "\n" + model.accept,
                ],
                template: "mail-offer", model: model, why: model.why + "\n" + t("mail.stopAt") + " " + model.stop)
        }
    }
}

/// The offer's message, as its HTML template (`mail-offer`) reads it.
struct OfferLetter {
    let greeting: String
    let held: String
    let until: String
    /// Where to accept it.
    let accept: String
    let why: String
    /// Where to stop Quad's mail.
    let stop: String
}
