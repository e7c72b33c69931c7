import Foundation
import HTTPTypes
import Hummingbird
import MultipartKit
import NIOCore

/// CSRF protection for every unsafe request a cookie signs, and for every browser form, whatever its path and
/// content type. Two checks, both in `AccessMiddleware`:
/// - when the browser says where the request comes from (`Sec-Fetch-Site`, `Origin`), it must be this origin:
///   a page on another port of the same host is "same-site" to the browser, but not this site;
/// - a random token in a cookie (double submit) that every form repeats in a hidden `csrf` field and every
///   script request in `X-CSRF-Token`. A cross-site page can send the cookie but cannot read it.
package enum CSRF {
    package static let cookie = "quad_csrf"
    package static let field = "csrf"
    package static let header = HTTPField.Name("X-CSRF-Token")!

    /// The request's token, and the cookie to set when it had none yet.
    package static func token(for request: Request) -> (token: String, setCookie: Cookie?) {
        if let existing = request.cookies[cookie]?.value, existing.count >= 32 { return (existing, nil) }
        let token = SecureRandom.base64url(byteCount: 32)
        return (token, Cookie(name: cookie, value: token, path: "/", httpOnly: true, sameSite: .strict))
    }

    /// Unsafe, and either signed by the session cookie or a body a browser form can send to any site
    /// (`application/x-www-form-urlencoded`, `multipart/form-data`, `text/plain`). A bearer token or an app
    /// link is not something a browser adds by itself, so those need no token.
    static func applies(to request: Request, signedIn: SignedIn) -> Bool {
        guard ![.get, .head, .options].contains(request.method) else { return false }
        switch signedIn {
        case .bearer, .appLink: return false
        case .cookie: return true
        case .no:
            let type = request.headers[.contentType]?.lowercased() ?? ""
            return type.isEmpty || type.hasPrefix("application/x-www-form-urlencoded")
                || type.hasPrefix("multipart/form-data") || type.hasPrefix("text/plain")
                || Credential.sessionCookie(in: request.headers[values: .cookie]) != nil
        }
    }

    /// 403 unless the request comes from this origin and repeats the cookie's token (header, or the form's
    /// `csrf` field, for which the form body is read here, within the route's body limit: `upload` for a form that
    /// sends a file).
    package static func check(_ request: inout Request, trustProxy: Bool, upload: Bool = false) async throws {
        if let site = request.headers[.secFetchSite]?.lowercased(), site != "same-origin", site != "none" {
            throw refusal
        }
        if let origin = request.headers[.origin], origin != request.baseURL(trustProxy: trustProxy) {
            throw refusal
        }
        var submitted = request.headers[header]
        let type = request.headers[.contentType]?.lowercased() ?? ""
        if submitted == nil, type.hasPrefix("application/x-www-form-urlencoded") {
            submitted = try await request.form(CSRFField.self).csrf
        } else if submitted == nil, type.hasPrefix("multipart/form-data") {
            submitted = try await request.multipartForm(
                CSRFField.self, limit: upload ? BodyLimit.upload : BodyLimit.json
            )
            .csrf
        }
        try verify(request, submitted: submitted)
    }

    package static let refusal = Problem(
        .forbidden, type: "csrf", title: "Form expired",
        detail: "This form has expired or did not come from Quad. Reload the page and try again.")

    /// Throws 403 unless `submitted` (form field or header) matches the cookie.
    package static func verify(_ request: Request, submitted: String?) throws {
        guard let expected = request.cookies[cookie]?.value, let submitted,
            expected.utf8.count == submitted.utf8.count,
            zip(expected.utf8, submitted.utf8).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0
        else { throw refusal }
    }
}

extension HTTPField.Name {
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
}

extension Request {
    /// An `application/x-www-form-urlencoded` body decoded as `T` with Hummingbird's `URLEncodedFormDecoder`
    /// (repeated fields are named `field[]`), read within the JSON body limit; a body that is not such a form
    /// answers 400. The body stays readable, so the CSRF check and the handler can both read it.
    package mutating func form<T: Decodable>(_ type: T.Type) async throws -> T {
        let body = try await collectBody(upTo: BodyLimit.json)
        do {
            return try URLEncodedFormDecoder().decode(T.self, from: String(buffer: body))
        } catch {
            // The decoder's own wording names Swift types: the sender gets what to do instead.
            throw Problem.malformedBody(
                "The form could not be read: send each field once, as text (a list as name[]=…), as Quad's pages do.")
        }
    }

    /// A `multipart/form-data` body (a form that sends a file) decoded as `T` with MultipartKit, read within `limit`
    /// (413 past it); a body that is not such a form answers 400. The body stays readable, as `form` leaves it.
    package mutating func multipartForm<T: Decodable>(_ type: T.Type, limit: Int) async throws -> T {
        let body: ByteBuffer
        do {
            body = try await collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw Problem.tooLarge(limit: limit)
        }
        guard let boundary = Self.boundary(headers[.contentType]) else {
            throw Problem.malformedBody("The form could not be read: it names no multipart boundary.")
        }
        do {
            return try FormDataDecoder().decode(T.self, from: body, boundary: boundary)
        } catch {
            throw Problem.malformedBody("The form could not be read: send it as Quad's page does.")
        }
    }

    /// `multipart/form-data; boundary=…`'s boundary, quoted or not.
    static func boundary(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value =
                pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") ? String(pair[1].dropFirst().dropLast()) : pair[1]
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// The fields of a form of single values (its CSRF token already checked by `AccessMiddleware`).
    package mutating func formFields() async throws -> [String: String] { try await form([String: String].self) }

    /// The query of a page's `GET` form, as the browser encodes it (a space is `+`, which the URI's own
    /// `queryParameters` keeps as a plus); a field sent twice or as a list is ignored.
    package var queryForm: [String: String] {
        (try? URLEncodedFormDecoder().decode([String: String].self, from: uri.query ?? "")) ?? [:]
    }
}

/// What the CSRF check reads of a form: its token, whatever else the form holds.
private struct CSRFField: Decodable {
    var csrf: String?
}
