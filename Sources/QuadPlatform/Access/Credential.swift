import NIOCore
import QuadCore

/// The credentials a request carries, read one way for both doors: the router (`AccessMiddleware`, `CSRF`) and the
/// fast path (`FastPath`), which ask this rather than keep copies in step.
package enum Credential: Equatable, Sendable {
    /// None: a visitor.
    case none
    /// `Authorization: Bearer <token>`: a session's token, or the admin token.
    case bearer(String)
    /// An `Authorization` header of another scheme (refused).
    case otherScheme
    /// The session cookie (`quad_session`); one that signs nobody in leaves a visitor.
    case sessionCookie(String)

    package static let sessionCookieName = "quad_session"

    /// What `authorization` (the `Authorization` header's value, all of them joined with ", ") and the `Cookie`
    /// headers carry. The `Authorization` header wins over the cookie.
    package static func read(authorization: String?, cookies: some Sequence<String>) -> Credential {
        if let authorization {
            guard authorization.count >= prefix.count, authorization.prefix(prefix.count).lowercased() == prefix else {
                return .otherScheme
            }
            return .bearer(authorization.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces))
        }
        return sessionCookie(in: cookies).map(Credential.sessionCookie) ?? .none
    }

    private static let prefix = "bearer "

    /// The session cookie's value in any of the `Cookie` headers (a browser's also carries `quad_csrf`, `quad_lang`):
    /// pairs split on `;`, leading whitespace dropped, the first one named wins.
    package static func sessionCookie(in headers: some Sequence<String>) -> String? {
        for header in headers {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop(while: \.isWhitespace)
                if trimmed.hasPrefix(cookiePrefix) { return String(trimmed.dropFirst(cookiePrefix.count)) }
            }
        }
        return nil
    }

    private static let cookiePrefix = sessionCookieName + "="
}

/// Whom per-client limits (requests, open streams) count: the person when signed in, else the address. One key for
/// both doors, so a client has one budget.
package enum ClientKey {
    package static func of(_ person: Person?, address: @autoclosure () -> String) -> String {
        person.map { of($0) } ?? address()
    }

    package static func of(_ person: Person) -> String { "user:" + person.username.lowercased() }

    /// The client a trusted proxy forwards for: the last `X-Forwarded-For` address (all of the headers' values
    /// joined with ", ") that is not itself a trusted proxy (the ones before it are the client's to write). Nil when
    /// the peer is not a trusted proxy.
    package static func forwardedClient(forwardedFor header: String?, peer: String?, trusted: Set<String>) -> String? {
        guard let peer, trusted.contains(peer), let header else { return nil }
        let hops = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return hops.reversed().lazy.compactMap { try? SocketAddress(ipAddress: $0, port: 0).ipAddress }
            .first { !trusted.contains($0) }
    }
}
