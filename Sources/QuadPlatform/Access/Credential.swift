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
    /// headers carry. The `Authorization` header wins over the cookie (the cookies are not read then).
    ///
    /// Read as bytes: on every signed-in request the fast path asks this, and Foundation's `trimmingCharacters`, the
    /// count of characters and `lowercased()` cost about 4 µs of its 30 (measured with `perf`). The token is trimmed
    /// of spaces and tabs, the only white space a header's value holds.
    package static func read<Cookies: Sequence<String>>(
        authorization: String?, cookies: @autoclosure () -> Cookies
    ) -> Credential {
        guard let authorization else {
            return sessionCookie(in: cookies()).map(Credential.sessionCookie) ?? .none
        }
        let bytes = authorization.utf8
        guard bytes.count >= scheme.count, zip(bytes, scheme).allSatisfy({ $0 == $1 || $0 == upper($1) }) else {
            return .otherScheme
        }
        let token = bytes.dropFirst(scheme.count)
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = token.firstIndex(where: { !isBlank($0) }), let last = token.lastIndex(where: { !isBlank($0) })
        else { return .bearer("") }
        return .bearer(String(Substring(authorization.utf8[first...last])))
    }

    /// `Bearer `, as it is compared: each byte, or its capital.
    private static let scheme = Array("bearer ".utf8)

    private static func upper(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte
    }

    /// The session cookie's value in any of the `Cookie` headers (a browser's also carries `quad_csrf`, `quad_lang`):
    /// pairs split on `;`, leading white space dropped, the first one named wins.
    ///
    /// Read as bytes, as the bearer token is: `split`, `drop(while: \.isWhitespace)` and `hasPrefix` on characters cost
    /// a signed-in browser's poll about 9 % of its time in the fast path (measured with `perf` during
    /// `Benchmarks/run rooms-304-cookie`). White space is ASCII's: a header's value holds no other before a name.
    package static func sessionCookie(in headers: some Sequence<String>) -> String? {
        for header in headers {
            let bytes = header.utf8
            var start = bytes.startIndex
            while start < bytes.endIndex {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
                let pair = bytes[start..<end].drop(while: isASCIIWhitespace)
                if pair.starts(with: cookiePrefix) {
                    return String(Substring(pair.dropFirst(cookiePrefix.count)))
                }
                start = end == bytes.endIndex ? end : bytes.index(after: end)
            }
        }
        return nil
    }

    private static func isASCIIWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || (0x09...0x0D).contains(byte)
    }

    private static let cookiePrefix = Array((sessionCookieName + "=").utf8)
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
