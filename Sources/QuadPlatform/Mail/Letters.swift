import Foundation
import QuadCore
import QuadMail

/// A message as a feature writes it, from what the change that causes it stored (`Input`, kept in the outbox as
/// JSON): written when the courier takes it, outside the change's transaction, to the address the person has then and
/// in their language. Each feature declares its kinds once (`Feature.letters`), by a name the outbox keeps.
package struct LetterKind<Input: Codable & Sendable>: Sendable {
    package let writer: LetterWriter

    package init<Model>(_ name: String, write: @escaping @Sendable (Input, MailContext) throws -> Letter<Model>) {
        writer = LetterWriter(name: name) { json, context, templates in
            let letter = try write(try JSONDecoder().decode(Input.self, from: json), context)
            return LetterWriter.Written(
                subject: letter.subject,
                text: letter.text,
                html: try templates.html(letter.template, language: context.t.language, model: letter.model),
                invitation: letter.invitation)
        }
    }
}

/// A `LetterKind` without its input's type, as the courier finds it by name.
package struct LetterWriter: Sendable {
    package let name: String
    let write: @Sendable (Data, MailContext, MailTemplates) throws -> Written

    /// A message's words: its subject, plain text (its foot included), HTML and calendar invitation.
    struct Written {
        let subject: String
        let text: String
        let html: String
        let invitation: ICalendar.Invitation?
    }
}

/// What the courier writes messages with: the features' letters, where each person's mail goes (Accounts'), the
/// templates, Quad's own address and its public address (for links, and each `Message-ID`'s right part).
package struct MailDesk: Sendable {
    let letters: [String: LetterWriter]
    let recipients: any MailRecipients
    let templates: MailTemplates
    let from: MailAddress
    /// `QUAD_PUBLIC_URL`, without a trailing slash: where mail's links lead.
    let publicURL: String
    let host: String

    init(
        letters: [LetterWriter], recipients: any MailRecipients, templates: MailTemplates, from: MailAddress,
        publicURL: String, host: String
    ) {
        self.letters = Dictionary(letters.map { ($0.name, $0) }) { first, _ in first }
        self.recipients = recipients
        self.templates = templates
        self.from = from
        self.publicURL = publicURL
        self.host = host
    }

    /// A link to `path` on Quad, as mail gives it.
    func link(_ path: String) -> String { publicURL + path }

    /// Message `id`, written by `letter` from `input` to `to`; `token` turns its kind off in one click.
    func write(
        id: String, letter: String, input: String, to: MailRecipient, token: String?, date: Date
    ) throws
        -> MailMessage
    {
        guard let writer = letters[letter] else { throw UnknownLetter(name: letter) }
        // A kind the person may turn off carries its one-click link (RFC 8058), and its page for people.
        let unsubscribe = token.map { link("/api/mail/unsubscribe?token=" + $0) }
        let stop = token.map { link("/mail/unsubscribe?token=" + $0) } ?? link("/account#email")
        let context = MailContext(
            t: Localizer(language: to.language), to: to, from: from.address, link: link, stop: stop)
        let written = try writer.write(Data(input.utf8), context, templates)
        return MailMessage(
            from: from, to: MailAddress(to.address, name: to.name), subject: written.subject, text: written.text,
            html: written.html,
            invitation: written.invitation.map { MailMessage.Invitation(method: $0.method, ics: $0.ics) },
            messageID: "<\(id)@\(host)>", date: date, unsubscribe: unsubscribe)
    }

    /// A message whose letter no feature declares (a build older or newer than the one that queued it).
    struct UnknownLetter: Error, CustomStringConvertible {
        let name: String
        var description: String { "no letter named \(name)" }
    }
}
