import Foundation
import QuadCore
import SQLKit

/// Where a person's mail goes, as Accounts knows it: a confirmed address, their name and the language they chose.
package struct MailRecipient: Sendable, Equatable {
    package let username: String
    package let name: String
    package let address: String
    package let language: Language

    package init(username: String, name: String, address: String, language: Language) {
        self.username = username
        self.name = name
        self.address = address
        self.language = language
    }
}

/// Accounts' answer to "where does this person's mail go?", read inside the caller's transaction (a feature mails
/// from inside the change it tells of). Handed to features at construction, like every narrow protocol.
package protocol MailRecipients: Sendable {
    /// `owner`'s (a username, any case) confirmed address, nil when they have none or turned `choice` off.
    func recipient(_ owner: String, choice: MailChoice?, _ sql: any SQLDatabase) async throws -> MailRecipient?
    /// A new link's token that turns `choice` off for `owner`, for the message being queued.
    func unsubscribeToken(_ owner: String, choice: MailChoice, _ sql: any SQLDatabase) async throws -> String
}

/// What a message is written with: the reader's language (`t`), who they are, Quad's own address (a calendar
/// invitation's organizer), links to Quad as mail gives them, and the page that stops mail like this one (`stop`:
/// its kind, in one click, else the account page).
package struct MailContext {
    package let t: Localizer
    package let to: MailRecipient
    package let from: String
    package let link: (String) -> String
    package let stop: String
}

/// A message for one person: its subject, its plain text's paragraphs, its HTML (a `mail-*` template over `model`),
/// the line at its foot that says why they got it, and a calendar invitation when it carries one (iMIP).
package struct Letter<Model> {
    package let subject: String
    package let paragraphs: [String]
    package let template: String
    package let model: Model
    package let why: String
    package let invitation: ICalendar.Invitation?

    package init(
        subject: String, paragraphs: [String], template: String, model: Model, why: String,
        invitation: ICalendar.Invitation? = nil
    ) {
        self.subject = subject
        self.paragraphs = paragraphs
        self.template = template
        self.model = model
        self.why = why
        self.invitation = invitation
    }
}

/// What a feature needs to write to a person: where their mail goes (`MailRecipients`), the templates and the outbox.
/// Writing does nothing when Quad sends no mail or the person has no confirmed address.
package struct PersonMail: Sendable {
    let mailer: Mailer?
    let recipients: any MailRecipients

    package init(mailer: Mailer?, recipients: any MailRecipients) {
        self.mailer = mailer
        self.recipients = recipients
    }

    /// No mail, for a store built by hand (tests, tools).
    package static let off = PersonMail(mailer: nil, recipients: Nobody())

    private struct Nobody: MailRecipients {
        func recipient(_ owner: String, choice: MailChoice?, _ sql: any SQLDatabase) async throws -> MailRecipient? {
            nil
        }

        func unsubscribeToken(_ owner: String, choice: MailChoice, _ sql: any SQLDatabase) async throws -> String {
            ""
        }
    }

    /// Whether Quad sends mail at all: when it does not, there is nothing to work out for a message.
    package var isOn: Bool { mailer != nil }

    /// Where `owner`'s mail of `kind` goes, inside the caller's transaction; nil when Quad sends none, they gave no
    /// address or they turned that kind off (then there is nothing more to work out).
    package func recipient(_ owner: String, for kind: MailKind, _ sql: any SQLDatabase) async throws -> MailRecipient? {
        guard mailer != nil else { return nil }
        return try await recipients.recipient(owner, choice: kind.choice, sql)
    }

    /// Queues `kind`'s message to `to` inside the caller's transaction, written by `letter` in their language. True
    /// when it was queued: call `wake()` once the transaction is committed. `about`: what a later change may withdraw
    /// it for, while it waits (`withdraw(about:)`).
    @discardableResult
    package func send<Model>(
        _ kind: MailKind, to: MailRecipient, about: String? = nil, _ sql: any SQLDatabase,
        letter: (MailContext) throws -> Letter<Model>
    ) async throws -> Bool {
        guard let mailer else { return false }
        // A kind the person may turn off carries its one-click link (RFC 8058), and its page for people.
        var unsubscribe: String?
        var stop = mailer.link("/account#email")
        if let choice = kind.choice {
            let token = try await recipients.unsubscribeToken(to.username, choice: choice, sql)
            unsubscribe = mailer.link("/api/mail/unsubscribe?token=" + token)
            stop = mailer.link("/mail/unsubscribe?token=" + token)
        }
        let letter = try letter(
            MailContext(
                t: Localizer(language: to.language), to: to, from: mailer.from.address, link: mailer.link, stop: stop))
        try await mailer.queue(
            to: to.address, name: to.name, subject: letter.subject,
            text: letter.paragraphs.joined(separator: "\n\n") + "\n\n-- \n" + letter.why,
            html: try mailer.templates.html(letter.template, language: to.language, model: letter.model),
            invitation: letter.invitation, unsubscribe: unsubscribe, kind: kind.rawValue, owner: to.username,
            about: about, sql)
        return true
    }

    /// `send` to `owner`, when Quad mails them.
    @discardableResult
    package func send<Model>(
        _ kind: MailKind, to owner: String, about: String? = nil, _ sql: any SQLDatabase,
        letter: (MailContext) throws -> Letter<Model>
    ) async throws -> Bool {
        guard let to = try await recipient(owner, for: kind, sql) else { return false }
        return try await send(kind, to: to, about: about, sql, letter: letter)
    }

    /// Inside the caller's transaction: what was queued `about` something and has not gone yet is withdrawn.
    package func withdraw(about: String, _ sql: any SQLDatabase) async throws {
        try await mailer?.outbox.withdraw(about: about, sql)
    }

    /// Delivers what was queued and committed now, rather than at the courier's next round.
    package func wake() { mailer?.wake() }
}
