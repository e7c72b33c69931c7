import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadLibrary
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer
@testable import QuadSpecials
@testable import QuadTimetable

/// Every unsafe request a cookie signs proves it comes from Quad, whatever its path and content type: the
/// CSRF token (header or form field), and this origin when the browser says where it comes from.
@Suite struct CSRFTests {
    static let token = String(repeating: "t", count: 43)

    /// A browser's headers for a person signed in with the session cookie (and the CSRF cookie the pages set).
    static func browser(_ app: TestApp, _ username: String, role: Role = .member) async throws -> HTTPFields {
        _ = try await app.signedIn(username, role: role)
        let (session, _) = try await app.features.accounts.sessions.start(for: username, kind: .web)
        return [.cookie: "quad_session=\(session); quad_csrf=\(token)"]
    }

    static func books(_ client: some TestClientProtocol) async throws -> Int {
        try await client.execute(uri: "/api/books", method: .get) { response in
            ((try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [Any])?.count ?? -1
        }
    }

    /// The attacks of the issue: a `text/plain` body (a form on another site can send one) to the API, by any
    /// path form, and a form post without the token; each changes nothing.
    @Test func crossSiteRequestsChangeNothing() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let admin = try await Self.browser(app, "boss", role: .admin)
            let before = try await Self.books(client)
            #expect(before > 0)
            var plain = admin
            plain[.contentType] = "text/plain"
            for path in ["/api/books/delete", "//api/books/delete", "/api/./books/delete"] {
                let response = try await client.execute(
                    uri: path, method: .post, headers: plain, body: ByteBuffer(string: #"{"ids": [1, 2]}"#)
                ) { $0 }
                #expect([.forbidden, .badRequest].contains(response.status), "\(path)")
            }
            try await client.execute(uri: "/api/books/1/checkout", method: .post, headers: plain) {
                #expect($0.status == .forbidden)
            }
            try await client.execute(uri: "/api/me/calendar", method: .post, headers: plain) {
                #expect($0.status == .forbidden)
            }
            var form = admin
            form[.contentType] = "application/x-www-form-urlencoded"
            try await client.execute(
                uri: "/library/books/1/delete", method: .post, headers: form, body: ByteBuffer(string: "x=1")
            ) { #expect($0.status == .forbidden) }
            try await client.execute(
                uri: "/admin/people/kier/remove", method: .post, headers: form, body: ByteBuffer(string: "csrf=wrong")
            ) { #expect($0.status == .forbidden) }
            #expect(try await Self.books(client) == before)
            #expect(try await app.features.accounts.people.find("kier") != nil)
        }
    }

    /// The token is not enough from another origin: a page on another port of the same host is "same-site" to
    /// the browser, but it is not Quad.
    @Test func theOriginMustBeThisSite() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            var headers = try await Self.browser(app, "ada")
            headers[CSRF.header] = Self.token
            headers[.contentType] = "application/json"
            for (name, value) in [
                ("Sec-Fetch-Site", "same-site"), ("Sec-Fetch-Site", "cross-site"),
                ("Origin", "http://localhost:9999"), ("Origin", "null"),
            ] {
                var foreign = headers
                foreign[HTTPField.Name(name)!] = value
                try await client.execute(
                    uri: "/api/rooms/ljerka/bookings", method: .post, headers: foreign, body: ByteBuffer(string: "{}")
                ) {
                    #expect($0.status == .forbidden, "\(name): \(value)")
                }
            }
            var same = headers
            same[.secFetchSite] = "same-origin"
            same[.origin] = "http://localhost"
            try await client.execute(
                uri: "/api/rooms/ljerka/bookings", method: .post, headers: same, body: ByteBuffer(string: "{}")
            ) {
                #expect($0.status == .created)
            }
        }
    }

    @Test func aFormWithItsTokenWorksAndABearerNeedsNone() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            var form = try await Self.browser(app, "ada")
            form[.contentType] = "application/x-www-form-urlencoded"
            try await client.execute(
                uri: "/rooms/ljerka/book", method: .post, headers: form, body: ByteBuffer(string: "csrf=\(Self.token)")
            ) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location]?.hasPrefix("/rooms?booked=ljerka&booking=") == true)
            }
            let bearer = try await app.signedIn("grace")
            #expect(try await client.book("ljerka", as: bearer).status == .created)
        }
    }
}
