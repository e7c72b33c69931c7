import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// `/account`: who you are, and your personal app links (create one, shown once; revoke one). Plain forms.
struct AccountRoutes {
    let accounts: Accounts
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/account", .person) { request, _ in
            let done = request.uri.queryParameters.get("done")
            let notice: ((Localizer) -> String)? =
                switch done {
                case "revoked": { $0("account.revoked") }
                case "password": { $0("account.passwordChanged") }
                case "mailSent": { $0("account.mailSent") }
                case "mailRemoved": { $0("account.mailRemoved") }
                case "mailSaved": { $0("account.mailSaved") }
                default: nil
                }
            return try await page(request, notice: notice)
        }
        routes.on(.post, "/account/password", .person, audit: true) { request, context in
            try await changePassword(request, context: context)
        }
        routes.on(.post, "/account/app-links", .member, audit: true) { request, _ in try await create(request) }
        routes.on(.post, "/account/app-links/:linkId/revoke", .member, audit: true) { _, context in
            let person = try Access.person()
            _ = try await accounts.appLinks.revoke(context.parameters.require("linkId"), of: person.username)
            return Response.seeOther(SitePath(known: "/account?done=revoked#app-links"))
        }
    }

    struct NewLink {
        var label: String
        var url: String
    }

    func page(
        _ request: Request, status: HTTPResponse.Status = .ok, notice: ((Localizer) -> String)? = nil,
        newLink: NewLink? = nil, form: [String: String] = [:], errors: [FieldError] = []
    ) async throws -> Response {
        let person = try Access.person()
        let links = try await accounts.appLinks.list(for: person.username)
        let mail = try await accounts.addresses.entry(of: person.username)
        let off = try await accounts.addresses.choicesOff(of: person.username)
        let record = try await accounts.platform.outbox.record(of: person.username)
        let sends = accounts.platform.mailer != nil
        let fromOrganisation = try await accounts.platform.database.read { sql in
            try await PeopleStore.signsInWithTheOrganisation(sql, person.username.lowercased())
        }
        let zone = TimeZone(identifier: "UTC")!
        return try web.page(request, template: "account", status: status, title: { $0("account.title") }) { t in
            AccountPage(
                signedInAs: t("account.signedInAs", ["name": person.displayName, "username": person.username]),
                username: person.username, fromOrganisation: fromOrganisation,
                feed: person.role == .feed, hasLinks: !links.isEmpty,
                links: links.map { link in
                    .init(
                        id: link.id, label: link.label,
                        createdText: t(
                            "account.createdOn",
                            [
                                "date": LibraryDate.day(
                                    link.createdAt, language: t.language, zone: zone, now: link.createdAt)
                            ]),
                        revokeConfirm: t("account.revokeConfirm", ["label": link.label]))
                },
                mail: .init(mail, off: off, sends: sends, form: form, t: t),
                record: MailRecord(record, t: t, now: accounts.platform.clock.now),
                form: form,
                errors: Dictionary(errors.map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first }),
                notice: notice?(t), newLink: newLink)
        }
    }

    /// A person changes their own password: the current one first (counted as a sign-in try, so it cannot be
    /// guessed here either), then the new one; every other session of theirs ends, this one stays. Their app
    /// links and calendar addresses stay: they chose to change it (an admin's reset ends those).
    func changePassword(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let person = try Access.person()
        let t = Localizer(language: web.language(for: request))
        do {
            let password = try AccountValidation.password(fields["password"])
            do {
                _ = try await accounts.signIn(
                    username: person.username, password: fields["current"] ?? "", address: context.clientAddress)
            } catch let problem as Problem where problem.status == .unauthorized {
                throw ValidationFailure(field: "current", message: t("account.wrongPassword"))
            }
            let session = Credential.sessionCookie(in: request.headers[values: .cookie]).map(SessionStore.hash)
            _ = try await accounts.people.update(
                person.username, displayName: nil, role: nil, studentId: nil, password: password, keepKeys: true,
                keepSession: session, keys: accounts.keys)
            return Response.seeOther(SitePath(known: "/account?done=password"))
        } catch let failure as ValidationFailure {
            return try await page(request, status: .unprocessableContent, errors: failure.errors)
        }
    }

    /// The new link's URL goes on this answer only (never into a redirect's URL, a log or the database).
    func create(_ request: Request) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let person = try Access.person()
        do {
            let label = try AccountValidation.displayName(fields["label"], field: "label")
            let (link, key) = try await accounts.appLinks.create(for: person.username, label: label)
            let base = request.baseURL(trustProxy: accounts.platform.configuration.trustProxy)
            var response = try await page(
                request, status: .created, newLink: NewLink(label: link.label, url: base + AppLinkPath.prefix + key))
            response.headers[.cacheControl] = "no-store"
            return response
        } catch let failure as ValidationFailure {
            return try await page(request, status: .unprocessableContent, form: fields, errors: failure.errors)
        }
    }
}

/// `/account`: who you are, and your personal app links.
struct AccountPage {
    let signedInAs: String
    /// For password managers: whose password the form changes.
    let username: String
    /// They sign in with the organisation's account: no password to change here.
    let fromOrganisation: Bool
    let feed: Bool
    let hasLinks: Bool
    let links: [Link]
    let mail: Mail
    /// What Quad mailed them lately.
    let record: MailRecord
    let form: [String: String]
    let errors: [String: String]
    let notice: String?
    /// A link just made, shown once.
    let newLink: AccountRoutes.NewLink?

    /// Where Quad sends the person mail, and the form to change it (nil `inUse` and `pending`: no address).
    struct Mail {
        /// The server sends mail at all.
        let sends: Bool
        let inUse: String?
        let pending: String?
        /// The form's address: what was typed, else the one waiting for its link, else the one in use.
        let value: String
        let languages: [Option]
        /// What it may mail them about, each a box, checked unless they turned it off.
        let choices: [Choice]

        struct Option {
            let code: String
            let name: String
            let selected: Bool
        }

        struct Choice {
            let code: String
            let label: String
            let on: Bool
        }

        init(
            _ entry: MailAddressStore.Entry?, off: Set<MailChoice>, sends: Bool, form: [String: String], t: Localizer
        ) {
            choices = MailChoice.allCases.map {
                Choice(code: $0.rawValue, label: t("account.mailChoice.\($0.rawValue)"), on: !off.contains($0))
            }
            self.sends = sends
            inUse = entry?.address.map { t("account.mailInUse", ["address": $0]) }
            pending = entry?.pending.map { t("account.mailPending", ["address": $0]) }
            value = form["email"] ?? entry?.pending ?? entry?.address ?? ""
            let chosen = form["language"].flatMap { Language(code: $0) } ?? entry?.language ?? t.language
            languages = Language.allCases.map { Option(code: $0.rawValue, name: $0.nativeName, selected: $0 == chosen) }
        }
    }

    struct Link {
        let id: String
        let label: String
        let createdText: String
        let revokeConfirm: String
    }
}
