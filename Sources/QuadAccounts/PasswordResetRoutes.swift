import Foundation
import HTTPTypes
import Hummingbird
import QuadCore
import QuadPlatform

/// A forgotten password: the sign-in page's link leads to `/signin/forgot`, where a username or an address in use
/// asks for a link (the answer is the same whether or not there is such an account, so nobody learns who has one);
/// the link (`/signin/reset?token=…`, an hour, once) opens a form for a new password. Setting it ends the person's
/// sessions everywhere; their app links and calendar addresses stay (they did not leak with a forgotten password).
struct PasswordResetRoutes {
    let accounts: Accounts
    let web: WebShell

    func register(on routes: Routes) {
        routes.on(.get, "/signin/forgot", .public) { request, _ in try forgotPage(request) }
        routes.on(.post, "/signin/forgot", .public) { request, context in try await ask(request, context: context) }
        routes.on(.get, "/signin/reset", .public) { request, _ in try await resetPage(request) }
        routes.on(.post, "/signin/reset", .public) { request, _ in try await reset(request) }
    }

    func forgotPage(
        _ request: Request, status: HTTPResponse.Status = .ok, who: String = "", error: String? = nil
    ) throws -> Response {
        try web.page(request, template: "password-forgot", status: status, title: { $0("forgot.title") }) { t in
            ForgotPage(
                sends: accounts.platform.mailer != nil, who: who, error: error,
                sent: request.uri.queryParameters.get("done") == "sent" ? t("forgot.sent") : nil)
        }
    }

    /// Sends a link when `who` names an account with an address in use, and answers the same either way. At most
    /// ten asks an hour from one address, and three links an hour for one account (more are not sent, silently).
    func ask(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let who = String((fields["who"] ?? "").prefix(254))
        let t = Localizer(language: web.language(for: request))
        guard let mailer = accounts.platform.mailer else {
            return try forgotPage(request, status: .conflict, who: who, error: t("forgot.off"))
        }
        guard accounts.resetAsks.take(context.clientAddress).allowed else {
            return try forgotPage(request, status: .tooManyRequests, who: who, error: t("forgot.tooMany"))
        }
        let resets = accounts.resets
        let queued = try await accounts.platform.database.transaction { sql in
            guard let (person, address, language) = try await resets.account(named: who, sql),
                accounts.resetLinks.take(person.username.lowercased()).allowed
            else { return false }
            let token = try await resets.start(for: person.username, sql)
            try await LinkMail(mailer: mailer).queue(
                .passwordReset, to: address, person: person, path: "/signin/reset", token: token, language: language,
                sql)
            return true
        }
        if queued { mailer.wake() }
        return Response.seeOther(SitePath(known: "/signin/forgot?done=sent"))
    }

    /// The form for a new password, or why the link no longer works.
    func resetPage(
        _ request: Request, status: HTTPResponse.Status = .ok, token: String? = nil, error: String? = nil
    ) async throws -> Response {
        let token = token ?? request.uri.queryParameters.get("token").map { String($0) } ?? ""
        let username = token.isEmpty ? nil : try await accounts.resets.username(token: token)
        var response = try web.page(request, template: "password-reset", status: status, title: { $0("reset.title") }) {
            t in
            ResetPage(
                username: username, ask: username.map { t("reset.ask", ["username": $0]) }, token: token, error: error,
                over: username == nil ? t("reset.over") : nil)
        }
        // The token is in this page's address and form: no cache keeps it.
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// Sets the new password and uses the link up, in one transaction; the person then signs in with it.
    func reset(_ request: Request) async throws -> Response {
        var request = request
        let fields = try await request.formFields()
        let token = fields["token"] ?? ""
        let password: String
        do {
            password = try AccountValidation.password(fields["password"])
        } catch let failure {
            return try await resetPage(
                request, status: .unprocessableContent, token: token, error: failure.errors.first?.message)
        }
        // A link over (or never made) leads to the page that says so, as a link used up meanwhile does.
        let over = Response.seeOther(SitePath(known: "/signin/reset"))
        guard let username = try await accounts.resets.username(token: token) else { return over }
        let resets = accounts.resets
        do {
            _ = try await accounts.people.update(
                username, displayName: nil, role: nil, studentId: nil, password: password, keepKeys: true,
                keys: accounts.keys
            ) { sql in
                guard try await resets.use(token: token, sql) else { throw LinkOver() }
            }
        } catch is LinkOver {
            return over
        }
        return Response.seeOther(SitePath(known: "/signin?done=reset"))
    }

    /// Someone else used the link first.
    struct LinkOver: Error {}
}

/// `/signin/forgot`: the form that asks for a link, or what became of the ask.
struct ForgotPage {
    let sends: Bool
    let who: String
    let error: String?
    let sent: String?
}

/// `/signin/reset`: the form for a new password, or the link over.
struct ResetPage {
    /// For password managers: whose password the form sets.
    let username: String?
    let ask: String?
    let token: String
    let error: String?
    let over: String?
}
