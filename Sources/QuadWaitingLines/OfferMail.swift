import Foundation
import QuadCore
import QuadPlatform
import SQLKit

extension WaitingLists {
    /// Inside the transaction that makes the offer: tells its owner by mail what is held for them, until when, and
    /// where to accept it (their notifications, which ask them to sign in first if they are not). True when a message
    /// was queued.
    func mailOffer(_ place: WaitingPlace, now: Date, _ sql: any SQLDatabase) async throws -> Bool {
        guard mail.isOn, let until = place.offeredUntil else { return false }
        let note = OfferNote(
            label: place.label, kind: place.kind.rawValue, until: until, now: now,
            timeZone: await campus.timeZone(sql).identifier)
        return try await mail.send(.offer, to: place.owner, letter: Self.offerLetter, note, sql)
    }

    /// What an offer's message is written from: what is held, until when (said from `now`, when it was made), and
    /// the campus's time zone.
    package struct OfferNote: Codable, Sendable {
        let label: String
        let kind: String
        let until: Date
        let now: Date
        let timeZone: String
    }

    /// An offer's message.
    package static let offerLetter = LetterKind<OfferNote>("offer") { note, mail in
        let t = mail.t
        let when = t.instant(
            note.until, now: note.now, clock: CampusClock(timeZone: TimeZone(identifier: note.timeZone) ?? .gmt))
        let model = OfferLetter(
            greeting: t("mail.greeting", ["name": mail.to.name]),
            held: t("mail.offer.held", ["label": note.label, "kind": t("waiting.kind.\(note.kind)")]),
            until: t("mail.offer.until", ["time": when]), accept: mail.link("/notifications#offers"),
            why: t("mail.offer.why"), stop: mail.stop)
        return Letter(
            subject: t("mail.offer.subject", ["label": note.label, "time": when]),
            paragraphs: [
                model.greeting, model.held, model.until, t("mail.offer.acceptAt") + "\n" + model.accept,
            ],
            template: "mail-offer", model: model, why: model.why + "\n" + t("mail.stopAt") + " " + model.stop)
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
