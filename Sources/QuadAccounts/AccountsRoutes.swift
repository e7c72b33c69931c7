import Foundation
import HTTPTypes
import Hummingbird
import QuadCore
import QuadPlatform

/// Sign-in, sign-out, sign-up and the admin's people page: plain forms, CSRF-protected.
struct AccountsRoutes {
    let accounts: Accounts
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/signin", .public) { request, _ in try signInPage(request) }
        routes.on(.post, "/signin", .public) { request, context in try await signIn(request, context: context) }
        routes.on(.post, "/signout", .public) { request, context in try await signOut(request, context: context) }
        routes.on(.get, "/signup", .public) { request, _ in
            let configuration = accounts.platform.configuration
            guard configuration.openSignup, configuration.localPasswords else { throw HTTPError(.notFound) }
            return try web.page(request, template: "signup", title: { $0("signup.title") }) { _ in FormState() }
        }
        routes.on(.post, "/signup", .public) { request, context in try await signUp(request, context: context) }
        routes.on(.post, "/admin/people/:username/sessions/end", .admin) { request, context in
            try await endSessions(request, username: context.parameters.require("username"))
        }
        routes.on(.get, "/admin/people", .admin) { request, _ in try await peoplePage(request) }
        routes.on(.post, "/admin/people", .admin) { request, _ in try await addPerson(request) }
        routes.on(.post, "/admin/people/:username", .admin) { request, context in
            try await changePerson(request, username: context.parameters.require("username"))
        }
        routes.on(.post, "/admin/people/:username/password", .admin) { request, context in
            try await resetPassword(request, username: context.parameters.require("username"))
        }
        routes.on(.get, "/admin/people/:username/mail", .admin) { request, context in
            try await mailRecordPage(request, username: context.parameters.require("username"))
        }
        routes.on(.post, "/admin/people/:username/remove", .admin) { request, context in
            try await removePerson(request, username: context.parameters.require("username"))
        }
    }

    // MARK: Signing in and out

    func signInPage(
        _ request: Request, status: HTTPResponse.Status = .ok, username: String = "", error: String? = nil
    )
        throws -> Response
    {
        try web.page(request, template: "signin", status: status, title: { $0("signin.title") }) { t in
            let next = SitePath.from(request.uri.queryParameters.get("next")).value
            return SignInPage(
                next: next, nextQuery: next.queryValueEncoded, username: username,
                openSignup: accounts.platform.configuration.openSignup
                    && accounts.platform.configuration.localPasswords,
                error: error, notice: request.uri.queryParameters.get("done") == "reset" ? t("reset.done") : nil,
                organisation: accounts.organisation?.label(t),
                localPasswords: accounts.platform.configuration.localPasswords)
        }
    }

    func signIn(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let username = fields["username"] ?? ""
        let t = Localizer(language: web.language(for: request))
        do {
            let person = try await accounts.signIn(
                username: username, password: fields["password"] ?? "", address: context.clientAddress)
            return try await startWebSession(for: person, request: request, next: fields["next"])
        } catch let problem as Problem where problem.status == .forbidden {
            return try signInPage(request, status: .forbidden, error: problem.detail)
        } catch let problem as Problem where problem.status == .unauthorized || problem.status == .tooManyRequests {
            let locked = problem.status == .tooManyRequests
            let seconds = Int(problem.headers[.retryAfter] ?? "60") ?? 60
            let wait =
                seconds < 60 ? t("signin.lockedSeconds", count: seconds) : t("signin.locked", count: seconds / 60 + 1)
            var response = try signInPage(
                request, status: problem.status, username: username, error: locked ? wait : t("signin.failed"))
            if locked { response.headers[.retryAfter] = problem.headers[.retryAfter] }
            return response
        }
    }

    private func startWebSession(for person: Person, request: Request, next: String?) async throws -> Response {
        let (token, _) = try await accounts.sessions.start(for: person.username, kind: .web)
        var response = Response.seeOther(SitePath.from(next))
        let secure = request.baseURL(trustProxy: accounts.platform.configuration.trustProxy).hasPrefix("https:")
        response.setCookie(
            Cookie(
                name: Credential.sessionCookieName, value: token, maxAge: Int(SessionStore.idleLifetime), path: "/",
                secure: secure, httpOnly: true, sameSite: .lax))
        return response
    }

    func signOut(_ request: Request, context: AppRequestContext) async throws -> Response {
        var via: String?
        if let token = context.sessionToken { via = try await accounts.sessions.end(token) }
        var response = Response.seeOther("/")
        // Signed in through the provider: signed out there too (RP-initiated logout), coming back to the home page.
        if via == Organisation.via, let address = await accounts.organisation?.signOutAddress() {
            response.headers[.location] = address.value
        }
        response.setCookie(
            Cookie(name: Credential.sessionCookieName, value: "", maxAge: 0, path: "/", httpOnly: true))
        // The service worker keeps the pages seen, for offline use: a shared computer keeps nobody's timetable
        // or bookings after they sign out.
        response.headers[.clearSiteData] = #""cache", "storage""#
        return response
    }

    func signUp(_ request: Request, context: AppRequestContext) async throws -> Response {
        let configuration = accounts.platform.configuration
        guard configuration.openSignup, configuration.localPasswords else { throw HTTPError(.notFound) }
        let decision = accounts.signUps.take(context.clientAddress)
        guard decision.allowed else {
            throw Problem(
                .tooManyRequests, type: "sign-up-throttled", title: "Too many new accounts",
                detail: "Too many accounts were created from this address: try again later.",
                headers: [.retryAfter: String(decision.seconds)])
        }
        var request = request
        let fields = try await request.formFields()
        do {
            let person = try await accounts.add(
                username: fields["username"] ?? "", displayName: fields["displayName"] ?? "",
                password: fields["password"] ?? "", role: Role.member.rawValue, studentId: nil, chosenBySelf: true)
            return try await startWebSession(for: person, request: request, next: "/")
        } catch let failure as ValidationFailure {
            return try formErrorPage(
                request, template: "signup", title: "signup.title", fields: fields, errors: failure.errors
            ) { _, form in form }
        } catch let problem as Problem where problem.status == .conflict {
            return try formErrorPage(
                request, template: "signup", title: "signup.title", fields: fields,
                errors: [FieldError(field: "username", message: problem.detail ?? problem.title)]
            ) { _, form in form }
        }
    }

    /// A form shown again with what was typed (never the password) and each error next to its field.
    private func formErrorPage<Model>(
        _ request: Request, template: String, title: String, fields: [String: String], errors: [FieldError],
        model: @escaping (Localizer, FormState) -> Model
    ) throws -> Response {
        try web.page(request, template: template, status: .unprocessableContent, title: { $0(title) }) { t in
            var typed = fields
            typed["password"] = nil
            typed["csrf"] = nil
            return model(
                t,
                FormState(
                    form: typed,
                    errors: Dictionary(errors.map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first }),
                    errorSummary: t("form.invalid")))
        }
    }

    // MARK: The admin's people page

    func peoplePage(_ request: Request, notice: String? = nil) async throws -> Response {
        let people = try await accounts.people.all()
        let mail = try await accounts.addresses.inUse()
        let organisation = try await accounts.organisationUsernames()
        return try web.page(request, template: "people", title: { $0("people.title") }) { t in
            self.peopleModel(
                people, mail: mail, organisation: organisation, t: t,
                notice: notice ?? Self.doneNotice(request, people: people, t: t))
        }
    }

    /// What the last change did, from `?done=added&who=ada`: built here from known words, never echoed from the URL.
    private static func doneNotice(_ request: Request, people: [Person], t: Localizer) -> String? {
        let query = request.uri.queryParameters
        guard let done = query.get("done"), ["added", "changed", "removed", "sessionsEnded"].contains(done),
            let who = query.get("who"), (try? AccountValidation.username(who)) != nil
        else { return nil }
        let name = people.first { $0.username.lowercased() == who.lowercased() }?.displayName ?? who
        return t("people.\(done)", ["name": name])
    }

    /// `mail`: the addresses in use, by username key.
    private func peopleModel(
        _ people: [Person], mail: [String: MailAddressStore.Entry], organisation: Set<String>, t: Localizer,
        notice: String?,
        formRole: String = "member", form: FormState = FormState()
    ) -> PeoplePage {
        func roles(_ selected: String) -> [PeoplePage.RoleOption] {
            Role.allCases.map {
                .init(value: $0.rawValue, label: t("people.roles.\($0.rawValue)"), selected: $0.rawValue == selected)
            }
        }
        return PeoplePage(
            people: people.map { person in
                .init(
                    username: person.username, displayName: person.displayName, studentId: person.studentId ?? "",
                    email: mail[person.username.lowercased()]?.address ?? "", roles: roles(person.role.rawValue),
                    fromOrganisation: organisation.contains(person.username.lowercased()),
                    removeConfirm: t("people.removeConfirm", ["name": person.displayName]))
            },
            formRoles: roles(formRole), notice: notice, form: form.form, errors: form.errors,
            errorSummary: form.errorSummary)
    }

    func addPerson(_ request: Request) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        do {
            let person = try await accounts.add(
                username: fields["username"] ?? "", displayName: fields["displayName"] ?? "",
                password: fields["password"] ?? "", role: fields["role"] ?? "member", studentId: fields["studentId"])
            return redirectToPeople(done: "added", who: person.username)
        } catch let error where error is ValidationFailure || (error as? Problem)?.status == .conflict {
            let errors =
                (error as? ValidationFailure)?.errors
                ?? [FieldError(field: "username", message: (error as? Problem)?.detail ?? "")]
            let people = try await accounts.people.all()
            let mail = try await accounts.addresses.inUse()
            let organisation = try await accounts.organisationUsernames()
            return try formErrorPage(request, template: "people", title: "people.title", fields: fields, errors: errors)
            { t, form in
                self.peopleModel(
                    people, mail: mail, organisation: organisation, t: t, notice: nil,
                    formRole: fields["role"] ?? "member", form: form)
            }
        }
    }

    func changePerson(_ request: Request, username: String) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        do {
            // The address only when it was changed: saving a name leaves a link the person waits for alone.
            let current = try await accounts.addresses.entry(of: username)?.address ?? ""
            let email = fields["email"].flatMap { $0.trimmingCharacters(in: .whitespaces) == current ? nil : $0 }
            let person = try await accounts.change(
                username, displayName: fields["displayName"], role: fields["role"],
                studentId: fields["studentId"].map { Optional($0) }, password: nil, email: email)
            return redirectToPeople(done: "changed", who: person.username)
        } catch let failure as ValidationFailure {
            return try await peoplePageWithError(request, failure.errors.map(\.message).joined(separator: " "))
        }
    }

    func resetPassword(_ request: Request, username: String) async throws -> Response {
        let password = SecureRandom.base64url(byteCount: 12)
        let person = try await accounts.change(
            username, displayName: nil, role: nil, studentId: nil, password: password)
        // Shown once, on this answer only: never put in a URL, a log or the database.
        let t = Localizer(language: web.language(for: request))
        return try await peoplePage(
            request, notice: t("people.newPassword", ["name": person.displayName, "password": password]))
    }

    /// Ends every session of theirs at once (someone who left the organisation is out now, not at their next
    /// sign-in).
    func endSessions(_ request: Request, username: String) async throws -> Response {
        guard let person = try await accounts.people.find(username) else {
            throw Problem.notFound("There is no one called \(username).")
        }
        try await accounts.sessions.endAll(of: person.username)
        return redirectToPeople(done: "sessionsEnded", who: person.username)
    }

    func removePerson(_ request: Request, username: String) async throws -> Response {
        try await accounts.remove(username)
        return redirectToPeople(done: "removed", who: username)
    }

    /// What Quad mailed one person lately, for an admin helping them.
    func mailRecordPage(_ request: Request, username: String) async throws -> Response {
        guard let person = try await accounts.people.find(username) else {
            throw Problem.notFound("There is no one called \(username).")
        }
        let sent = try await accounts.platform.outbox.record(of: person.username)
        let address = try await accounts.addresses.entry(of: person.username)?.address
        return try web.page(request, template: "person-mail", title: { $0("people.mail.title") }) { t in
            PersonMailPage(
                heading: t("people.mail.heading", ["name": person.displayName, "username": person.username]),
                address: address.map { t("account.mailInUse", ["address": $0]) } ?? t("people.mail.none"),
                record: MailRecord(sent, t: t, now: accounts.platform.clock.now))
        }
    }

    private func redirectToPeople(done: String, who: String) -> Response {
        .seeOther("/admin/people?done=\(done)&who=\(who)#people-notice")
    }

    private func peoplePageWithError(_ request: Request, _ message: String) async throws -> Response {
        let people = try await accounts.people.all()
        let mail = try await accounts.addresses.inUse()
        let organisation = try await accounts.organisationUsernames()
        return try web.page(request, template: "people", status: .unprocessableContent, title: { $0("people.title") }) {
            t in
            self.peopleModel(
                people, mail: mail, organisation: organisation, t: t, notice: nil,
                form: FormState(errorSummary: message))
        }
    }
}

/// A form shown again after it was refused: what was typed (never the password) and each field's error.
struct FormState {
    var form: [String: String] = [:]
    var errors: [String: String] = [:]
    var errorSummary: String?
}

/// `/signin`.
struct SignInPage {
    let next: String
    /// `next`, encoded for the organisation button's query.
    let nextQuery: String
    let username: String
    let openSignup: Bool
    let error: String?
    /// A new password was just set.
    let notice: String?
    /// The organisation button's words, when Quad has sign-in with the organisation.
    let organisation: String?
    /// Whether the password form is offered.
    let localPasswords: Bool
}

/// `/admin/people/{username}/mail`: what Quad mailed them.
struct PersonMailPage {
    let heading: String
    let address: String
    let record: MailRecord
}

/// `/admin/people`: everyone, with their role, and the form to add someone.
struct PeoplePage {
    let people: [Row]
    let formRoles: [RoleOption]
    let notice: String?
    let form: [String: String]
    let errors: [String: String]
    let errorSummary: String?

    struct Row {
        let username: String
        let displayName: String
        let studentId: String
        /// The address in use (given by them and confirmed, or by an admin).
        let email: String
        let roles: [RoleOption]
        /// They sign in with the organisation's account.
        let fromOrganisation: Bool
        let removeConfirm: String
    }

    struct RoleOption {
        let value: String
        let label: String
        let selected: Bool
    }
}

extension HTTPField.Name {
    static let clearSiteData = HTTPField.Name("Clear-Site-Data")!
}
