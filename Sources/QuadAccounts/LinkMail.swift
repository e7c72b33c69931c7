import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// A message whose point is one link the person asked for (to confirm an address they gave, to set a new password),
/// in their language, text and HTML (`mail-link`). Never turned off: nobody gets one without asking.
struct LinkMail {
    let mailer: Mailer

    struct Model {
        let subject: String
        let greeting: String
        let asked: String
        let button: String
        let link: String
        let lasts: String
        let why: String
    }

    /// Queues `kind`'s message to `address` in the caller's transaction: its strings are `mail.confirm.*` or
    /// `mail.reset.*`, its link `path?token=…`.
    func queue(
        _ kind: MailKind, to address: String, person: Person, path: String, token: String, language: Language,
        _ sql: any SQLDatabase
    ) async throws {
        let t = Localizer(language: language)
        let key = kind == .passwordReset ? "mail.reset" : "mail.confirm"
        var query = URLComponents()
        query.queryItems = [URLQueryItem(name: "token", value: token)]
        let model = Model(
            subject: t("\(key).subject"), greeting: t("mail.greeting", ["name": person.displayName]),
            asked: t("\(key).asked", ["username": person.username]), button: t("\(key).button"),
            link: mailer.link(path + (query.string ?? "")), lasts: t("\(key).lasts"), why: t("\(key).why"))
        let letter = Letter(
            subject: model.subject, paragraphs: [model.greeting, model.asked, model.link, model.lasts],
            template: "mail-link", model: model, why: model.why)
        try await mailer.queue(
            to: address, name: person.displayName, subject: letter.subject, text: letter.text,
            html: try mailer.templates.html(letter.template, language: language, model: model), kind: kind.rawValue,
            owner: person.username, sql)
    }
}
