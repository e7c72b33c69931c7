import HTTPTypes

/// The headers every answer carries, whichever path wrote it (the router through `FrontDoor`, or
/// `FastPath`), with `Server` and `Date`: no type sniffing, no framing, no referrer outside the site, and a content security
/// policy the pages keep. Scripts come from Quad's own files only (the pages' JSON data blocks are not scripts);
/// style attributes are allowed because the specials mosaic sizes its tiles with CSS variables in `style`.
package enum SecurityHeaders {
    /// `formOrigins`: where else a form may lead. Browsers hold a form's redirects to `form-action` too, so signing
    /// out (a form) can go on to the organisation's provider only when its origin is named.
    static func contentSecurityPolicy(formOrigins: [String]) -> String {
        [
            "default-src 'self'", "script-src 'self'", "style-src 'self'", "style-src-attr 'unsafe-inline'",
            "img-src 'self' data: blob:", "connect-src 'self'", "object-src 'none'", "base-uri 'none'",
            (["form-action 'self'"] + formOrigins).joined(separator: " "), "frame-ancestors 'none'",
        ].joined(separator: "; ")
    }

    package static func all(formOrigins: [String]) -> [(name: String, value: String)] {
        [
            ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy", contentSecurityPolicy(formOrigins: formOrigins)),
            ("X-Frame-Options", "DENY"),
            ("Referrer-Policy", "same-origin"),
        ]
    }

    /// The headers of answers no form is in (JSON, event streams, refusals).
    package static let all = all(formOrigins: [])

    /// `all(formOrigins:)` as typed fields, made once per server rather than per answer.
    package static func fields(formOrigins: [String]) -> [HTTPField] {
        all(formOrigins: formOrigins).map { HTTPField(name: HTTPField.Name($0.name)!, value: $0.value) }
    }

    package static func add(to headers: inout HTTPFields, _ fields: [HTTPField]) {
        for field in fields where headers[field.name] == nil { headers.append(field) }
    }

    /// The `Server` header's value, whichever path wrote the answer.
    package static let serverName = "Quad"

    /// An answer that depends on who asks (the request was signed in) is for that person's browser only:
    /// `private` keeps it out of shared caches. Content-addressed images are the same for everyone.
    static func markPrivate(_ headers: inout HTTPFields) {
        headers[.cacheControl] = personal(headers[.cacheControl])
    }

    /// `policy` (the `Cache-Control` value; none: `no-cache`) for an answer that depends on who asks.
    static func personal(_ policy: String?) -> String {
        if let policy, ["immutable", "private", "no-store"].contains(where: policy.contains) { return policy }
        return policy.map { "private, " + $0 } ?? "private, no-cache"
    }
}
