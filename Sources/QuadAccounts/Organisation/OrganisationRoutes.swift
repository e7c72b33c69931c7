import Foundation
import HTTPTypes
import Hummingbird
import Logging
import QuadCore
import QuadPlatform

/// `/signin/sso` sends the browser to the provider; `/signin/sso/callback` is where the provider sends it back.
/// Whatever goes wrong on the way is a page that says what and offers to start again, with no session made.
struct OrganisationRoutes {
    let accounts: Accounts
    let organisation: Organisation
    let web: WebShell

    /// The cookie binding a flow to the browser that started it: sent back only to these two paths.
    static let cookieName = "quad_sso"
    static let cookiePath = "/signin/sso"

    func register(on routes: Routes) {
        routes.on(.get, "/signin/sso", .public) { request, context in try await start(request, context: context) }
        routes.on(.get, "/signin/sso/callback", .public) { request, _ in try await finish(request) }
    }

    func start(_ request: Request, context: AppRequestContext) async throws -> Response {
        let decision = accounts.organisationStarts.take(context.clientAddress)
        guard decision.allowed else {
            throw Problem(
                .tooManyRequests, type: "sign-in-throttled", title: "Too many sign-ins",
                detail: "Too many sign-ins were started from this address: try again in a minute.",
                headers: [.retryAfter: String(decision.seconds)])
        }
        let query = request.uri.queryParameters
        var app: SignInFlows.App?
        if query.get("app_port") != nil || query.get("app_state") != nil || query.get("app_challenge") != nil {
            app = SignInFlows.App(
                port: query.get("app_port"), state: query.get("app_state"), challenge: query.get("app_challenge"))
            if app == nil { return try problemPage(request, .badRequest, "sso.appInvalid") }
        }
        let started = try await organisation.flows.start(next: SitePath.from(query.get("next")), app: app)
        let address: ProviderAddress
        do {
            address = try await organisation.authorizationAddress(started, language: web.language(for: request))
        } catch {
            return try failurePage(request, error)
        }
        var response = Response(status: .seeOther, headers: [.location: address.value])
        response.setCookie(flowCookie(started.browserKey, request: request, maxAge: Int(SignInFlows.lifetime)))
        return response
    }

    func finish(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let state = query.get("state").flatMap { (1...512).contains($0.count) ? $0 : nil }
        guard let key = request.cookies[Self.cookieName]?.value, let state else {
            return try problemPage(request, .badRequest, "sso.expired")
        }
        if let error = query.get("error") {
            try await organisation.flows.drop(state: state, browserKey: key)
            let code = OpenIDProvider.errorCode(error)
            return try problemPage(
                request, .badRequest, code == "access_denied" ? "sso.denied" : "sso.providerError",
                ["error": code])
        }
        guard let code = query.get("code"), (1...2048).contains(code.count),
            let flow = try await organisation.flows.claim(state: state, browserKey: key)
        else { return try problemPage(request, .badRequest, "sso.expired") }
        let person: Person
        do {
            let token = try await organisation.provider.idToken(
                code: code, verifier: flow.verifier, redirectURI: organisation.redirectURI)
            let claims = try await organisation.provider.verify(token, nonce: flow.nonce)
            person = try await accounts.person(from: claims, settings: organisation.settings)
        } catch {
            return try failurePage(request, error)
        }
        accounts.platform.logger.info(
            "Signed in with the organisation: \(person.username)\(flow.app == nil ? "" : " (for an app)")")
        var response: Response
        if let app = flow.app {
            let code = try await organisation.flows.code(for: person.username, challenge: app.challenge)
            // The second bounded exception: the command line or app that started the flow, on this machine only.
            response = Response(status: .seeOther, headers: [.location: app.redirect(code: code)])
        } else {
            let (token, _) = try await accounts.sessions.start(
                for: person.username, kind: .web, endsAt: organisation.sessionEnd, via: Organisation.via)
            response = .seeOther(SitePath.from(flow.next))
            response.setCookie(
                Cookie(
                    name: Credential.sessionCookieName, value: token, maxAge: organisation.settings.sessionHours * 3600,
                    path: "/", secure: secure(request), httpOnly: true, sameSite: .lax))
        }
        response.setCookie(flowCookie("", request: request, maxAge: 0))
        return response
    }

    private func flowCookie(_ value: String, request: Request, maxAge: Int) -> Cookie {
        Cookie(
            name: Self.cookieName, value: value, maxAge: maxAge, path: Self.cookiePath, secure: secure(request),
            httpOnly: true, sameSite: .lax)
    }

    private func secure(_ request: Request) -> Bool {
        request.baseURL(trustProxy: accounts.platform.configuration.trustProxy).hasPrefix("https:")
    }

    /// The page for what stopped a sign-in. The reason is logged for the operator; the person reads what to do.
    private func failurePage(_ request: Request, _ error: any Error) throws -> Response {
        switch error {
        case let failure as OpenIDProvider.Failure:
            switch failure {
            case .misconfigured(let why):
                accounts.platform.logger.error("Sign-in with the organisation is not set up right: \(why)")
                return try problemPage(request, .serviceUnavailable, "sso.misconfigured")
            case .unreachable(let why):
                accounts.platform.logger.warning("Sign-in with the organisation: the provider is unreachable: \(why)")
                return try problemPage(request, .serviceUnavailable, "sso.unreachable")
            case .refused(let why):
                accounts.platform.logger.notice("Sign-in with the organisation: the provider refused: \(why)")
                return try problemPage(request, .badRequest, "sso.refused", ["error": why])
            case .untrusted(let why):
                accounts.platform.logger.warning("Sign-in with the organisation: an answer was refused: \(why)")
                return try problemPage(request, .badRequest, "sso.untrusted")
            }
        case Accounts.OrganisationRefusal.addressInUse:
            return try problemPage(request, .conflict, "sso.addressInUse")
        case let failure as ValidationFailure:
            return try problemPage(
                request, .conflict, "sso.notSaved", ["why": failure.errors.map(\.message).joined(separator: " ")])
        case let problem as Problem where problem.status == .conflict:
            return try problemPage(request, .conflict, "sso.notSaved", ["why": problem.detail ?? problem.title])
        default:
            throw error
        }
    }

    private func problemPage(
        _ request: Request, _ status: HTTPResponse.Status, _ key: String, _ values: [String: String] = [:]
    ) throws -> Response {
        try web.page(request, template: "sso-problem", status: status, title: { $0("sso.title") }) { t in
            OrganisationProblemPage(
                message: t(key, values.merging(["organisation": organisation.name(t)]) { first, _ in first }),
                again: organisation.label(t))
        }
    }
}

/// A sign-in through the provider that did not finish: why, and a way to start again.
struct OrganisationProblemPage {
    let message: String
    /// The button that starts again ("Sign in with …").
    let again: String
}
