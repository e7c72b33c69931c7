import Foundation
import QuadCore
import QuadMail
import SQLKit

/// How a feature sends mail: it queues a message inside the transaction of the change it tells of, then wakes the
/// courier once that is committed. Nil on the platform (`Platform.mailer`) when Quad sends none (no relay, sender and
/// public address set): a feature then offers nothing that needs mail.
package struct Mailer: Sendable {
    let outbox: Outbox
    let courier: MailCourier
    /// What messages are written with (the features' letters, the templates, Quad's addresses).
    let desk: MailDesk

    /// `QUAD_PUBLIC_URL`, without a trailing slash: where mail's links lead.
    package var publicURL: String { desk.publicURL }
    /// The messages' HTML.
    package var templates: MailTemplates { desk.templates }

    /// A message written now (a link the person asked for: to confirm an address, to set a password) of `kind`
    /// (`MailKind`) for `owner` (a username, for their record) to `to`, queued in the caller's transaction. Its
    /// `Message-ID` is made here, once: a message tried again is known as the same.
    package func queue(
        to address: String, name: String?, subject: String, text: String, html: String?,
        invitation: ICalendar.Invitation? = nil, unsubscribe: String? = nil, kind: String, owner: String?,
        about: String? = nil, _ sql: any SQLDatabase
    ) async throws {
        let id = Outbox.newId()
        let message = MailMessage(
            from: desk.from, to: MailAddress(address, name: name), subject: subject, text: text, html: html,
            invitation: invitation.map { MailMessage.Invitation(method: $0.method, ics: $0.ics) },
            messageID: "<\(id)@\(desk.host)>", date: outbox.clock.now, unsubscribe: unsubscribe)
        try await outbox.enqueue(message, id: id, kind: kind, owner: owner?.lowercased(), about: about, sql)
    }

    /// Messages were queued and committed: deliver them now rather than at the courier's next round.
    package func wake() { courier.wake() }

    /// A link to `path` on Quad, as mail gives it.
    package func link(_ path: String) -> String { desk.link(path) }
}

extension MailDesk {
    /// The desk for the configuration's sender and public address (nil without either).
    init?(
        letters: [LetterWriter], recipients: any MailRecipients, templates: MailTemplates,
        _ configuration: ServerConfiguration
    ) {
        guard let from = configuration.mailFrom, let publicURL = configuration.publicURL,
            let host = URLComponents(string: publicURL)?.host
        else { return nil }
        self.init(
            letters: letters, recipients: recipients, templates: templates, from: from, publicURL: publicURL,
            host: host)
    }
}
