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

/// Accounts' answer to "where does this person's mail go?", asked by the courier as it writes each message (and by a
/// feature that would work a message out only for someone who gets it). Handed to the platform at its start, with the
/// features' letters, like every narrow protocol.
package protocol MailRecipients: Sendable {
    /// `owner`'s (a username, any case) confirmed address, nil when they have none or turned `choice` off.
    func recipient(_ owner: String, choice: MailChoice?, _ sql: any SQLDatabase) async throws -> MailRecipient?
    /// New links' tokens, one for each message being written: each turns its `choice` off for its `owner`.
    func unsubscribeTokens(
        _ wanted: [(owner: String, choice: MailChoice)], _ sql: any SQLDatabase
    ) async throws -> [String]
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

    /// Its plain text: the paragraphs, then the line that says why, after a signature separator ("-- ").
    package var text: String { paragraphs.joined(separator: "\n\n") + "\n\n-- \n" + why }
}

/// The message of one piece of news (a loan falling due, a product on special), as its HTML template reads it: the
/// greeting, the news, the page where it stands, why they got it and where to stop it.
package struct NewsLetter {
    package let greeting: String
    package let news: String
    /// The page where the news stands.
    package let link: String
    package let why: String
    package let stop: String
}

extension Letter where Model == NewsLetter {
    /// One piece of news to `mail`'s reader: `seeAt` introduces the link to `path` in the plain text, `why` says why
    /// they got it; `template` (`mail-loan`) draws it in HTML.
    package static func news(
        subject: String, news: String, seeAt: String, path: String, why: String, template: String,
        _ mail: MailContext
    ) -> Letter {
        let t = mail.t
        let model = NewsLetter(
            greeting: t("mail.greeting", ["name": mail.to.name]), news: news, link: mail.link(path), why: why,
            stop: mail.stop)
        return Letter(
            subject: subject, paragraphs: [model.greeting, model.news, seeAt + "\n" + model.link],
            template: template, model: model, why: model.why + "\n" + t("mail.stopAt") + " " + model.stop)
    }
}

/// What a feature needs to write to a person: the outbox, and where their mail goes (`MailRecipients`). Writing does
/// nothing when Quad sends no mail; a message for a person with no confirmed address is dropped when it is written.
package struct PersonMail: Sendable {
    let mailer: Mailer?

    package init(mailer: Mailer?) {
        self.mailer = mailer
    }

    /// No mail, for a store built by hand (tests, tools).
    package static let off = PersonMail(mailer: nil)

    /// Nobody gets mail (tests and tools that mail nobody).
    package struct Nobody: MailRecipients {
        package init() {}

        package
            func recipient(_ owner: String, choice: MailChoice?, _ sql: any SQLDatabase) async throws -> MailRecipient?
        {
            nil
        }

        package func unsubscribeTokens(
            _ wanted: [(owner: String, choice: MailChoice)], _ sql: any SQLDatabase
        ) async throws -> [String] {
            wanted.map { _ in "" }
        }
    }

    /// Whether Quad sends mail at all: when it does not, there is nothing to work out for a message.
    package var isOn: Bool { mailer != nil }

    /// Where `owner`'s mail of `kind` goes, inside the caller's transaction; nil when Quad sends none, they gave no
    /// address or they turned that kind off (then a rare change need not work its message out: the courier asks again
    /// as it writes it).
    package func recipient(_ owner: String, for kind: MailKind, _ sql: any SQLDatabase) async throws -> MailRecipient? {
        guard let mailer else { return nil }
        return try await mailer.desk.recipients.recipient(owner, choice: kind.choice, sql)
    }

    /// Inside the caller's transaction: `kind`'s message to `owner` is to go, written by `letter` from `input` when
    /// the courier takes it (to the address they have then, in their language; not at all if they have none or turned
    /// that kind off by then). True when it was queued: call `wake()` once the transaction is committed. `about`: what a
    /// later change may withdraw it for, while it waits (`withdraw(about:)`).
    @discardableResult
    package func send<Input>(
        _ kind: MailKind, to owner: String, about: String? = nil, letter: LetterKind<Input>, _ input: Input,
        _ sql: any SQLDatabase
    ) async throws -> Bool {
        guard let mailer else { return false }
        let json = String(decoding: try JSONEncoder().encode(input), as: UTF8.self)
        try await mailer.outbox.enqueue(
            letter: letter.writer.name, input: json, kind: kind.rawValue, owner: owner.lowercased(), about: about, sql)
        return true
    }

    /// Inside the caller's transaction: what was queued `about` something and has not gone yet is withdrawn.
    package func withdraw(about: String, _ sql: any SQLDatabase) async throws {
        try await mailer?.outbox.withdraw(about: about, sql)
    }

    /// Delivers what was queued and committed now, rather than at the courier's next round.
    package func wake() { mailer?.wake() }
}
