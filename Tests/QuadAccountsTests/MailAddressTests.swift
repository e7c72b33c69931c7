import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadMail
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform

/// A person gives their mail address on `/account`: a link goes to it (through a real SMTP server, aiosmtpd), in the
/// language they chose, and the address is used once the link's button is pressed, by anyone holding the link.
@Suite(.enabled(if: SMTPSink.available, "python3 with aiosmtpd (pip install -r e2e/requirements.txt)"))
struct MailAddressTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    static func form(
        _ client: some TestClientProtocol, _ path: String, cookie: String, _ fields: [(String, String)]
    ) async throws -> TestResponse {
        var body = URLComponents()
        body.queryItems = ([("csrf", csrf)] + fields).map { URLQueryItem(name: $0.0, value: $0.1) }
        return try await client.execute(
            uri: path, method: .post,
            headers: [
                .contentType: "application/x-www-form-urlencoded", .cookie: cookie, .acceptLanguage: "en",
                .accept: "text/html",
            ],
            body: ByteBuffer(string: body.percentEncodedQuery ?? "")
        ) { $0 }
    }

    static func page(_ client: some TestClientProtocol, _ path: String, cookie: String) async throws -> TestResponse {
        try await client.execute(
            uri: path, method: .get, headers: [.cookie: cookie, .acceptLanguage: "en", .accept: "text/html"]
        ) { $0 }
    }

    @Test(arguments: TestDatabase.engines)
    func anAddressIsUsedOnceItsLinkIsFollowed(engine: Database.Engine) async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        try await TestApp.run(engine, configure: sink.quad) { app, client in
            _ = try await app.signedIn("kier")
            let (session, _) = try await app.features.accounts.sessions.start(for: "kier", kind: .web)
            let cookie = "quad_session=\(session); quad_csrf=\(Self.csrf)"

            let bad = try await Self.form(
                client, "/account/email", cookie: cookie, [("email", "kier at example"), ("language", "fr")])
            #expect(bad.status == .unprocessableContent)
            #expect(bad.text.contains("Give an email address such as ada@example.org."))
            #expect(try sink.messages().isEmpty)

            let given = try await Self.form(
                client, "/account/email", cookie: cookie, [("email", " Kier@Example.ORG "), ("language", "fr")])
            #expect(given.status == .seeOther)
            #expect(given.headers[.location] == "/account?done=mailSent#email")
            try await eventually("the link reached the relay") { try sink.messages().count == 1 }
            let message = try #require(sink.messages().first)
            #expect(message["rcpt_tos"] as? [String] == ["Kier@example.org"])
            #expect(message["subject"] as? String == "Confirmez votre adresse pour Quad")
            let parts = message["parts"] as? [[String: Any]] ?? []
            let text = try #require(parts.first { $0["type"] as? String == "text/plain" }?["body"] as? String)
            let html = try #require(parts.first { $0["type"] as? String == "text/html" }?["body"] as? String)
            #expect(text.contains("Bonjour Kier,") && text.contains("en tant que kier"))
            let link = try #require(
                text.split(separator: "\n").first {
                    $0.hasPrefix("https://quad.campus.example/account/email/confirm?token=")
                })
            #expect(html.contains("href=\"\(link)\""))
            #expect(html.contains("<html lang=\"fr\">"))

            // Until the link is followed, the address waits: the account page says so, and no mail goes there.
            let waiting = try await Self.page(client, "/account", cookie: cookie)
            #expect(waiting.text.contains("A link was sent to Kier@example.org"))
            #expect(waiting.text.contains("Quad has no address of yours"))
            #expect(try await app.features.accounts.addresses.entry(of: "kier")?.address == nil)

            // The link opens a page with one button, in a browser that is signed in to nothing.
            let path = String(link.dropFirst("https://quad.campus.example".count))
            let opened = try await Self.page(client, path, cookie: "quad_csrf=\(Self.csrf)")
            #expect(opened.status == .ok)
            #expect(opened.headers[.cacheControl] == "no-store")
            #expect(opened.text.contains("Send the mail Quad has for kier to Kier@example.org?"))
            #expect(try await app.features.accounts.addresses.entry(of: "kier")?.address == nil)

            let token = try #require(URLComponents(string: String(link))?.queryItems?.first?.value)
            let confirmed = try await Self.form(
                client, "/account/email/confirm", cookie: "quad_csrf=\(Self.csrf)", [("token", token)])
            #expect(confirmed.headers[.location] == "/account/email/confirm?done=confirmed")
            let entry = try await app.features.accounts.addresses.entry(of: "kier")
            #expect(entry == .init(address: "Kier@example.org", language: .french, pending: nil))
            let inUse = try await Self.page(client, "/account", cookie: cookie)
            #expect(inUse.text.contains("Mail goes to Kier@example.org."))

            // A link works once.
            let again = try await Self.form(
                client, "/account/email/confirm", cookie: "quad_csrf=\(Self.csrf)", [("token", token)])
            #expect(again.headers[.location] == "/account/email/confirm?done=over")
            let over = try await Self.page(client, path, cookie: "quad_csrf=\(Self.csrf)")
            #expect(over.text.contains("This link no longer works"))

            // The same address again changes only the language; none stops mail.
            let language = try await Self.form(
                client, "/account/email", cookie: cookie, [("email", "Kier@example.org"), ("language", "en")])
            #expect(language.headers[.location] == "/account?done=mailSaved#email")
            #expect(try await app.features.accounts.addresses.entry(of: "kier")?.language == .english)
            #expect(try sink.messages().count == 1)
            let removed = try await Self.form(
                client, "/account/email", cookie: cookie, [("email", ""), ("language", "en")])
            #expect(removed.headers[.location] == "/account?done=mailRemoved#email")
            #expect(try await app.features.accounts.addresses.entry(of: "kier")?.address == nil)
        }
    }

    /// A forgotten password: asked for by username or by address, the answer the same whether or not there is such
    /// an account with an address in use; the link goes to the address in use, sets a new password once, within the
    /// hour, and ends the person's sessions.
    @Test(arguments: TestDatabase.engines)
    func aForgottenPasswordIsSetThroughALinkToTheAddressInUse(engine: Database.Engine) async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        try await TestApp.run(engine, configure: sink.quad) { app, client in
            _ = try await app.signedIn("kier")
            _ = try await app.signedIn("ada")
            let (session, _) = try await app.features.accounts.sessions.start(for: "kier", kind: .web)
            _ = try await app.features.accounts.change(
                "kier", displayName: nil, role: nil, studentId: nil, password: nil, email: "kier@example.org")
            let visitor = "quad_csrf=\(Self.csrf)"

            // Nobody of that name, and Ada (no address): the same answer, nothing sent.
            for who in ["nobody-here", "ada", "someone@example.org"] {
                let asked = try await Self.form(client, "/signin/forgot", cookie: visitor, [("who", who)])
                #expect(asked.headers[.location] == "/signin/forgot?done=sent")
            }
            let sent = try await Self.page(client, "/signin/forgot?done=sent", cookie: visitor)
            #expect(sent.text.contains("If that account has an email address on this Quad"))

            // Kier, by his address in another case: a link to it.
            let asked = try await Self.form(client, "/signin/forgot", cookie: visitor, [("who", " KIER@example.org ")])
            #expect(asked.headers[.location] == "/signin/forgot?done=sent")
            try await eventually("the link reached the relay") { try sink.messages().count == 1 }
            #expect(try await app.platform.outbox.record(of: "ada").isEmpty)
            let message = try #require(sink.messages().first)
            #expect(message["rcpt_tos"] as? [String] == ["kier@example.org"])
            #expect(message["subject"] as? String == "Set a new password for Quad")
            let parts = message["parts"] as? [[String: Any]] ?? []
            let text = try #require(parts.first { $0["type"] as? String == "text/plain" }?["body"] as? String)
            let link = try #require(
                text.split(separator: "\n").first { $0.hasPrefix("https://quad.campus.example/signin/reset?token=") })
            let path = String(link.dropFirst("https://quad.campus.example".count))
            let token = try #require(URLComponents(string: String(link))?.queryItems?.first?.value)

            let opened = try await Self.page(client, path, cookie: visitor)
            #expect(opened.headers[.cacheControl] == "no-store")
            #expect(opened.text.contains("A new password for kier."))
            let short = try await Self.form(
                client, "/signin/reset", cookie: visitor, [("token", token), ("password", "short")])
            #expect(short.status == .unprocessableContent)
            let set = try await Self.form(
                client, "/signin/reset", cookie: visitor, [("token", token), ("password", "a new long password")])
            #expect(set.headers[.location] == "/signin?done=reset")
            #expect(try await app.features.accounts.sessions.person(for: session) == nil)
            let person = try await app.features.accounts.signIn(
                username: "kier", password: "a new long password", address: "192.0.2.1")
            #expect(person.username == "kier")

            // Once.
            let again = try await Self.form(
                client, "/signin/reset", cookie: visitor, [("token", token), ("password", "another long password")])
            #expect(again.headers[.location] == "/signin/reset")
            let over = try await Self.page(client, path, cookie: visitor)
            #expect(over.text.contains("This link no longer works"))
        }
    }

    /// Each link is a message to an address someone typed: five an hour for one person, then a clear refusal that
    /// saves nothing of the form.
    @Test func linksAreFewForOnePerson() async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        try await TestApp.run(configure: sink.quad) { app, client in
            _ = try await app.signedIn("ada")
            let (session, _) = try await app.features.accounts.sessions.start(for: "ada", kind: .web)
            let cookie = "quad_session=\(session); quad_csrf=\(Self.csrf)"
            for index in 1...5 {
                let given = try await Self.form(
                    client, "/account/email", cookie: cookie, [("email", "ada\(index)@example.org")])
                #expect(given.status == .seeOther)
            }
            // Refused, the form changes nothing: not even its boxes (all unticked here).
            let refused = try await Self.form(
                client, "/account/email", cookie: cookie, [("email", "ada6@example.org"), ("choices", "1")])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("You asked for many links in a short time"))
            #expect(try await app.features.accounts.addresses.choicesOff(of: "ada").isEmpty)
            try await eventually("five links reached the relay") { try sink.messages().count == 5 }
            #expect(try await app.features.accounts.addresses.entry(of: "ada")?.pending == "ada5@example.org")
        }
    }

    /// Without a relay Quad sends nothing, and the account page says so rather than offer a form that cannot work.
    @Test func withoutARelayThePageSaysNoMailGoes() async throws {
        try await TestApp.run { app, client in
            _ = try await app.signedIn("ada")
            let (session, _) = try await app.features.accounts.sessions.start(for: "ada", kind: .web)
            let cookie = "quad_session=\(session); quad_csrf=\(Self.csrf)"
            let page = try await Self.page(client, "/account", cookie: cookie)
            #expect(page.text.contains("This Quad sends no mail"))
            #expect(!page.text.contains("action=\"/account/email\""))
            let given = try await Self.form(client, "/account/email", cookie: cookie, [("email", "ada@example.org")])
            #expect(given.status == .conflict)
            #expect(try await app.features.accounts.addresses.entry(of: "ada") == nil)
        }
    }
}
