import Foundation
import HTTPTypes
import Hummingbird

/// CSRF protection for forms and page scripts: a random token in a cookie (double submit) that every
/// state-changing form repeats in a hidden `csrf` field, and every script request in `X-CSRF-Token`.
/// A cross-site page can send the cookie but cannot read it, so it cannot repeat it.
enum CSRF {
    static let cookie = "quad_csrf"
    static let field = "csrf"
    static let header = HTTPField.Name("X-CSRF-Token")!

    /// The request's token, and the cookie to set when it had none yet.
    static func token(for request: Request) -> (token: String, setCookie: Cookie?) {
        if let existing = request.cookies[cookie]?.value, existing.count >= 32 { return (existing, nil) }
        let token = SecureRandom.base64url(byteCount: 32)
        return (token, Cookie(name: cookie, value: token, path: "/", httpOnly: true, sameSite: .strict))
    }

    /// Throws 403 unless `submitted` (form field or header) matches the cookie.
    static func verify(_ request: Request, submitted: String?) throws {
        guard let expected = request.cookies[cookie]?.value, let submitted,
            expected.utf8.count == submitted.utf8.count,
            zip(expected.utf8, submitted.utf8).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0
        else {
            throw Problem(
                .forbidden, type: "csrf", title: "Form expired",
                detail: "This form has expired or did not come from Quad. Reload the page and try again.")
        }
    }
}

extension Request {
    /// The fields of a posted form, once its CSRF token is checked (403 when it does not match).
    mutating func verifiedForm() async throws -> [String: String] {
        let fields = try await formFields()
        try CSRF.verify(self, submitted: fields[CSRF.field])
        return fields
    }

    /// The fields of an `application/x-www-form-urlencoded` body.
    mutating func formFields() async throws -> [String: String] {
        let body = try await collectBody(upTo: BodyLimit.json)
        let text = String(buffer: body)
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            if let name = parts.first { fields[name] = parts.count > 1 ? parts[1] : "" }
        }
        return fields
    }
}
