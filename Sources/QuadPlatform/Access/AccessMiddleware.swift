import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import QuadCore

/// The one door every routed request passes, on the matched route and before its body is read:
/// 1. who is calling: a personal app link (set by `FrontDoor`), else `Authorization: Bearer` (a session token or
///    the admin token), else the session cookie, as `Credential` reads them (the fast path reads them so too).
///    Refused credentials spend the address's rate limit, then 401;
/// 2. the route's declaration (`AccessTable`): 401 to sign in (a page sends a browser to the sign-in form),
///    403 for the wrong role;
/// 3. for an unsafe request a cookie signs, or a browser form: CSRF (`CSRF.check`), but on a route whose authority is
///    the token in its URL (`AccessRule.link`).
package struct AccessMiddleware: RouterMiddleware {
    package typealias Context = AppRequestContext
    package let people: any PersonDirectory
    package let admin: AdminAuth
    let table: AccessTable
    let limiter: RateLimiter?
    /// `QUAD_TRUST_PROXY`: a request from one of these addresses is counted as from the client it forwards.
    let trustedProxies: Set<String>
    /// Who may read `/metrics` (`AccessRule.metrics`).
    var metrics = MetricsAccess()
    package var trustProxy: Bool { !trustedProxies.isEmpty }

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        // No endpoint: no route matched, and the router answers 404 or 405 next, whoever asks.
        guard let endpoint = context.endpointPath else { return try await next(request, context) }
        var context = context
        context.forwardedClient = Self.forwardedClient(
            request, peer: context.remoteAddress?.ipAddress, trusted: trustedProxies)
        // A monitoring system is known by its address or the metrics token, never as a person.
        if table.entry(request.method, endpoint: endpoint)?.rule == .metrics {
            guard metrics.allows(address: context.clientAddress, authorization: request.headers[.authorization])
            else { throw Problem(.forbidden, detail: "Metrics are for the monitoring system the operator names.") }
            return try await next(request, context)
        }
        try await identify(request, &context)
        guard let entry = table.entry(request.method, endpoint: endpoint) else {
            // `buildRouter` refuses to start with an undeclared route, so this is a route added behind its back.
            throw Problem.notFound("Nothing is at \(request.uri.path).")
        }
        if context.signedIn == .appLink, !entry.appLink {
            throw Problem(.forbidden, detail: "An app link reaches only the original apps' routes.")
        }
        switch entry.rule.decide(context.person?.role) {
        case .allowed: break
        case .signInFirst:
            if let redirect = signInRedirect(request, endpoint: endpoint) { return redirect }
            throw Problem.unauthorized("Sign in first.")
        case .forbidden(let reason):
            throw Problem(.forbidden, detail: reason)
        }
        var request = request
        if entry.rule != .link, CSRF.applies(to: request, signedIn: context.signedIn) {
            try await CSRF.check(&request, trustProxy: trustProxy, upload: entry.upload)
        }
        var response = try await next(request, context)
        if context.person != nil { SecurityHeaders.markPrivate(&response.headers) }
        return response
    }

    /// The client a trusted proxy forwards for: the last `X-Forwarded-For` address that is not itself a trusted
    /// proxy (the ones before it are the client's to write). Nil when the peer is not a trusted proxy.
    static func forwardedClient(_ request: Request, peer: String?, trusted: Set<String>) -> String? {
        ClientKey.forwardedClient(forwardedFor: request.headers[.xForwardedFor], peer: peer, trusted: trusted)
    }

    /// Sets the caller from the credentials the request carries.
    private func identify(_ request: Request, _ context: inout Context) async throws {
        if let key = context.appLinkKey {
            guard let person = try await people.person(appLink: key) else {
                try refuse(context, "This app link is not valid, or it was revoked.")
            }
            context.person = person
            context.signedIn = .appLink
            return
        }
        switch Credential.read(
            authorization: request.headers[.authorization], cookies: request.headers[values: .cookie])
        {
        case .none:
            break
        case .otherScheme:
            try refuse(context, "Use Authorization: Bearer <token>.")
        case .bearer(let token):
            if admin.isAdminToken(token), let admin = try await people.tokenAdmin() {
                context.person = admin
                context.signedIn = .bearer
            } else if let person = try await people.person(session: token) {
                context.person = person
                context.signedIn = .bearer
                context.sessionToken = token
            } else {
                try refuse(context, "The token is not valid, or its session has ended. Sign in again.")
            }
        case .sessionCookie(let token):
            guard let person = try await people.person(session: token) else { return }
            context.person = person
            context.signedIn = .cookie
            context.sessionToken = token
        }
    }

    /// 401 for refused credentials, which spend the address's rate limit first (429 once it is spent), so
    /// guessing tokens is as slow as any other flood.
    private func refuse(_ context: Context, _ detail: String) throws -> Never {
        if let limiter {
            let decision = limiter.take(context.clientAddress)
            if !decision.allowed { throw RateLimitMiddleware.refusal(decision, limiter: limiter) }
        }
        throw Problem.unauthorized(detail)
    }

    /// A browser on a page or form is sent to sign in, and brought back: to the page it asked for, or for a
    /// form to the page it was sent from (its `Referer`, when that is this site).
    private func signInRedirect(_ request: Request, endpoint: String) -> Response? {
        guard !AccessTable.isAPI(endpoint) else { return nil }
        var back = SitePath.home
        if request.method == .get || request.method == .head {
            back = SitePath.from(request.head.path)
        } else if let referer = request.headers[.referer].flatMap(URLComponents.init(string:)),
            referer.host == nil
                || "\(referer.scheme ?? "http")://\(referer.host ?? "")\(referer.port.map { ":\($0)" } ?? "")"
                    == request.baseURL(trustProxy: trustProxy)
        {
            back = SitePath.from(referer.percentEncodedPath + (referer.percentEncodedQuery.map { "?" + $0 } ?? ""))
        }
        return .seeOther(SitePath.signIn(next: back))
    }
}

/// Who may do what: the caller `AccessMiddleware` found, for handlers that act on it.
package enum Access {
    /// The signed-in person; 401 for a visitor (the layer has already refused visitors where the route wants
    /// someone, so this is the handler saying whom it acts for).
    package static func person() throws -> Person {
        guard let person = RequestInfo.current.person else {
            throw Problem.unauthorized("Sign in first.")
        }
        return person
    }
}

/// How the caller proved who they are.
package enum SignedIn: Sendable, Equatable {
    case no, cookie, bearer, appLink
}

extension SitePath {
    package static func signIn(next: SitePath) -> SitePath {
        // A next path too long to carry brings the person home after signing in.
        SitePath("/signin?next=" + next.value.queryValueEncoded) ?? SitePath(known: "/signin")
    }
}

extension String {
    /// Percent-encoded for a query value: everything but unreserved characters and `/`, so `&`, `=`, `+`, `#`
    /// and `?` inside the value cannot end it early.
    package var queryValueEncoded: String {
        var allowed = CharacterSet.alphanumerics.intersection(
            CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._~/")
        return addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}

extension Response {
    /// 303 to a path on this site: the one way Quad sends a browser somewhere.
    package static func seeOther(_ path: SitePath) -> Response {
        Response(status: .seeOther, headers: [.location: path.value])
    }

    /// 303 to `path` when it is a path on this site, else to the home page: what Quad builds from parts that
    /// came with a request can never send a browser elsewhere.
    package static func seeOther(_ path: String) -> Response {
        seeOther(SitePath.from(path))
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
