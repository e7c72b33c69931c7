import Foundation
import Hummingbird
import QuadCore
import QuadPlatform
import SQLKit

/// A person's own mail address: given on `/account` (`POST /account/email`), used once they follow the link sent to
/// it (`/account/email/confirm?token=…`, a page with one button: mail scanners open links, and opening one changes
/// nothing). Plain forms.
struct MailAddressRoutes {
    let accounts: Accounts
    let web: WebShell
    let account: AccountRoutes

    func register(on routes: Routes) {
        routes.on(.post, "/account/email", .person, audit: true) { request, _ in try await give(request) }
        routes.on(.get, "/account/email/confirm", .public) { request, _ in try await confirmPage(request) }
        routes.on(.post, "/account/email/confirm", .public) { request, _ in try await confirm(request) }
    }

    /// The address and the language given: a new address waits for its link (sent now, at most five an hour for one
    /// person); the one in use gets the language alone; none stops mail.
    func give(_ request: Request) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let person = try Access.person()
        let t = Localizer(language: web.language(for: request))
        guard let mailer = accounts.platform.mailer else {
            return try await account.page(
                request, status: .conflict, form: fields,
                errors: [FieldError(field: "email", message: t("account.mailOff"))])
        }
        let language = fields["language"].flatMap { Language(code: $0) } ?? t.language
        do {
            let address: String?
            do {
                address = try AccountValidation.mailAddress(fields["email"])
            } catch {
                // The check's sentence is the API's, in English: the page says it in its own language.
                throw ValidationFailure(field: "email", message: t("account.mailInvalid"))
            }
            // The form's boxes, one per choice: those not sent are off. Saved once nothing else can refuse the form.
            let off =
                fields["choices"] == nil ? nil : MailChoice.allCases.filter { fields["mail-\($0.rawValue)"] == nil }
            func saveChoices() async throws {
                if let off { try await accounts.addresses.setChoicesOff(person.username, Set(off)) }
            }
            let current = try await accounts.addresses.entry(of: person.username)
            guard let address else {
                try await saveChoices()
                try await accounts.addresses.remove(person.username)
                try await accounts.addresses.setLanguage(person.username, language)
                return Response.seeOther(SitePath(known: "/account?done=mailRemoved#email"))
            }
            if address == current?.address {
                try await saveChoices()
                try await accounts.addresses.setLanguage(person.username, language)
                return Response.seeOther(SitePath(known: "/account?done=mailSaved#email"))
            }
            guard accounts.confirmations.take(person.username.lowercased()).allowed else {
                throw ValidationFailure(field: "email", message: t("account.mailTooMany"))
            }
            try await saveChoices()
            try await accounts.platform.database.transaction { sql in
                let token = try await accounts.addresses.request(
                    person.username, address: address, language: language, sql)
                try await LinkMail(mailer: mailer).queue(
                    .confirmAddress, to: address, person: person, path: "/account/email/confirm", token: token,
                    language: language, sql)
            }
            mailer.wake()
            return Response.seeOther(SitePath(known: "/account?done=mailSent#email"))
        } catch let failure as ValidationFailure {
            return try await account.page(
                request, status: .unprocessableContent, form: fields, errors: failure.errors)
        }
    }

    /// What the link opens: the address and whose it is, and the button that confirms it (or why the link is over).
    func confirmPage(_ request: Request) async throws -> Response {
        let done = request.uri.queryParameters.get("done")
        let token = request.uri.queryParameters.get("token").map { String($0) } ?? ""
        let pending = token.isEmpty ? nil : try await accounts.addresses.pending(token: token)
        var response = try web.page(request, template: "email-confirm", title: { $0("mailConfirm.title") }) { t in
            MailConfirmPage(
                ask: done == nil
                    ? pending.map { t("mailConfirm.ask", ["username": $0.username, "address": $0.address]) } : nil,
                token: token,
                done: done == "confirmed" ? t("mailConfirm.done") : nil,
                over: done == "over" || (done == nil && pending == nil) ? t("mailConfirm.over") : nil)
        }
        // The token is in this page's address and form: no cache keeps it (and `Referrer-Policy: same-origin`, on
        // every answer, tells no other site).
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The button: the address is the person's from now on, and the answer says so (or that the link is over).
    func confirm(_ request: Request) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let confirmed = try await accounts.addresses.confirm(token: fields["token"] ?? "")
        return Response.seeOther(
            SitePath(known: confirmed ? "/account/email/confirm?done=confirmed" : "/account/email/confirm?done=over"))
    }
}

/// `/account/email/confirm`: one of the question and its button, the address confirmed, or the link over.
struct MailConfirmPage {
    let ask: String?
    let token: String
    let done: String?
    let over: String?
}
