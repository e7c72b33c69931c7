import Foundation
import HTTPTypes
import Hummingbird
import QuadCore

/// Finds out who is calling: `Authorization: Bearer` (an API session token, or the admin token), else the
/// session cookie. A cookie-signed request that changes something through the API must also carry the
/// CSRF token in `X-CSRF-Token` (forms check theirs in their routes); without it, 403.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let accounts: Accounts
    static let sessionCookie = "quad_session"

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        var context = context
        if let authorization = request.headers[.authorization] {
            guard authorization.lowercased().hasPrefix("bearer ") else {
                throw Problem.unauthorized("Use Authorization: Bearer <token>.")
            }
            let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
            if accounts.platform.admin.isAdminToken(token) {
                context.person = try await accounts.tokenAdmin()
            } else if let person = try await accounts.sessions.person(for: token) {
                context.person = person
                context.sessionToken = token
            } else {
                throw Problem.unauthorized("The token is not valid, or its session has ended. Sign in again.")
            }
        } else if let token = request.cookies[Self.sessionCookie]?.value,
            let person = try await accounts.sessions.person(for: token)
        {
            context.person = person
            context.signedInWithCookie = true
            context.sessionToken = token
            let changes = ![.get, .head, .options].contains(request.method)
            if changes, request.uri.path.hasPrefix("/api/") {
                try CSRF.verify(request, submitted: request.headers[CSRF.header])
            }
        }
        return try await next(request, context)
    }
}

/// Who may do what: checks against the caller `AuthMiddleware` found.
enum Access {
    /// The signed-in person; 401 for a visitor.
    static func person() throws -> Person {
        guard let person = RequestInfo.current.person else {
            throw Problem.unauthorized("Sign in first.")
        }
        return person
    }

    /// An admin; 401 for a visitor, 403 for anyone else.
    @discardableResult
    static func admin() throws -> Person {
        let person = try person()
        guard person.isAdmin else { throw Problem(.forbidden, detail: "Only an admin may do this.") }
        return person
    }

    /// A car-park or transit feed (or an admin).
    @discardableResult
    static func feed() throws -> Person {
        let person = try person()
        guard person.role == .feed || person.isAdmin else {
            throw Problem(.forbidden, detail: "Only a feed account or an admin may post readings.")
        }
        return person
    }
}
