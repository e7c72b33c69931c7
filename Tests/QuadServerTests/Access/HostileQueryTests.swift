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

/// Nothing from a request reaches a link, a form action or a redirect unchecked: every page is rendered with
/// hostile values in every query parameter Quad reads, for a visitor and for a signed-in admin, and every
/// `href`, `src`, `action` and `Location` must stay a path on this site that none of them shaped.
@Suite struct HostileQueryTests {
    static let names = [
        "booked", "booking", "building", "cancelled", "count", "date", "done", "edit", "error", "id", "name", "q",
        "saved", "select", "sort", "status", "student", "who", "key", "next", "rotated", "types", "lang",
    ]
    static let values = [
        "../../../admin/people/kier/remove?", "//evil.example/", "/\t/evil.example", "javascript:alert(1)",
        "\"><script>alert(1)</script>", "https://evil.example/", "/%2F%2Fevil.example", "\\\\evil.example",
    ]

    /// What a hostile value could have left in a URL.
    static func shaped(_ url: String) -> Bool {
        let lowered = url.lowercased()
        return ["evil", "../", "javascript:", "<script", "admin/people/kier/remove", "\\"].contains {
            lowered.contains($0)
        }
    }

    /// A URL Quad may write: a path on this site (not `//`), a fragment or query of this page, or this site's own
    /// absolute URL.
    static func sameSite(_ url: String) -> Bool {
        if url.hasPrefix("#") || url.hasPrefix("?") { return true }
        if url.hasPrefix("/") { return !url.hasPrefix("//") && !url.hasPrefix("/\\") }
        return ["http://localhost/", "webcal://localhost/", "mailto:"].contains { url.hasPrefix($0) }
    }

    /// A redirect stays on this site; sending a visitor to sign in carries the page they asked for, query and
    /// all, as one encoded `next` value that is itself a path on this site, to that page.
    static func safeLocation(_ location: String, page: String) -> Bool {
        guard sameSite(location) else { return false }
        guard location.hasPrefix("/signin?next=") else { return !shaped(location) }
        let next = URLComponents(string: location)?.queryItems?.first { $0.name == "next" }?.value
        return SitePath(next)?.value.hasPrefix(page + "?") == true
    }

    static func urls(in html: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: #"(?:href|src|action|formaction)\s*=\s*"([^"]*)""#)
        let range = NSRange(html.startIndex..., in: html)
        return pattern.matches(in: html, range: range).compactMap { match in
            Range(match.range(at: 1), in: html).map { String(html[$0]) }
        }.map { $0.replacingOccurrences(of: "&amp;", with: "&") }
    }

    @Test func everyPageWithHostileQueryValues() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let router = try await buildRouter(app.platform, features: app.features.all, people: app.features.accounts)
            let special = try await SpecialStore(database: app.platform.database, clock: app.clock).all().first?.id
            let pages = router.routes.filter { $0.method == .get }.map { $0.path.description }.filter {
                !AccessTable.isAPI($0) && !$0.hasPrefix("/assets") && $0 != "/sw.js"
            }.map {
                $0.replacingOccurrences(of: "{bookId}", with: "1").replacingOccurrences(
                    of: "{specialId}", with: special ?? "none")
            }
            #expect(pages.count >= 10)
            let (session, _) = try await app.features.accounts.sessions.start(for: "admin", kind: .web)
            let visitor: HTTPFields = [.accept: "text/html"]
            let admin: HTTPFields = [.accept: "text/html", .cookie: "quad_session=\(session)"]
            for caller in [visitor, admin] {
                for page in pages {
                    // What the page links to anyway; the hostile renderings may add only safe URLs to it.
                    let clean = Set(
                        Self.urls(in: try await client.execute(uri: page, method: .get, headers: caller) { $0.text }))
                    for value in Self.values {
                        let encoded = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                        let query = Self.names.filter { $0 != "lang" }.map { "\($0)=\(encoded)" }
                            .joined(separator: "&")
                        let response = try await client.execute(uri: "\(page)?\(query)", method: .get, headers: caller)
                        {
                            $0
                        }
                        let name = "\(page) with \(value.debugDescription)"
                        #expect(response.status.code < 500, "\(name)")
                        #expect(!response.text.contains("<script>alert(1)"), "\(name)")
                        if let location = response.headers[.location] {
                            #expect(Self.safeLocation(location, page: page), "\(name): Location \(location)")
                        }
                        for url in Self.urls(in: response.text) where !clean.contains(url) {
                            #expect(Self.safeURL(url), "\(name): \(url)")
                        }
                    }
                }
            }
        }
    }

    /// A URL on this site whose path no hostile value shaped (its query may carry what was typed, encoded).
    static func safeURL(_ url: String) -> Bool {
        guard sameSite(url), let components = URLComponents(string: url) else { return false }
        return !shaped(components.path) && !components.path.hasPrefix("//")
    }

    /// The issue's link: an admin who opens it sees no button aimed anywhere but at their own booking.
    @Test func aCraftedBookingLinkCannotAimTheCancelButton() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let (session, _) = try await app.features.accounts.sessions.start(for: "admin", kind: .web)
            let admin: HTTPFields = [.accept: "text/html", .cookie: "quad_session=\(session)"]
            let page = try await client.execute(
                uri: "/rooms?booked=ljerka&booking=../../../admin/people/kier/remove%3F", method: .get, headers: admin
            ) { $0 }
            #expect(page.status == .ok)
            #expect(!page.text.contains("admin/people/kier"))
            #expect(!Self.urls(in: page.text).contains { $0.contains("/cancel") })
        }
    }

    @Test func signInSendsBackOnlyToThisSite() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            _ = try await app.features.accounts.people.update(
                "ada", displayName: nil, role: nil, studentId: nil, password: "analytical-engine",
                keys: app.features.accounts.keys)
            for next in ["/\t/evil.example", "//evil.example", "/\\evil.example", "https://evil.example", "/%2F/evil"] {
                let body = [
                    "csrf=\(CSRFTests.token)", "username=ada", "password=analytical-engine",
                    "next=\(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")",
                ].joined(separator: "&")
                let response = try await client.execute(
                    uri: "/signin", method: .post,
                    headers: [
                        .contentType: "application/x-www-form-urlencoded", .cookie: "quad_csrf=\(CSRFTests.token)",
                    ],
                    body: ByteBuffer(string: body)
                ) { $0 }
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/", "next=\(next.debugDescription)")
            }
        }
    }

    @Test func sitePathsAreOnlyPathsOnThisSite() {
        for bad in [
            "/\t/evil.example", "//evil.example", "/\\evil.example", "https://evil.example", "evil", "", "/a/../b",
            "/%2F/evil", "/a\nb", "/\u{0}",
        ] {
            #expect(SitePath(bad) == nil, "\(bad.debugDescription)")
        }
        for good in ["/", "/rooms?booked=ljerka", "/library/books/1?done=saved#notice", "/signin?next=%2Frooms"] {
            #expect(SitePath(good)?.value == good)
        }
        #expect(SitePath.signIn(next: SitePath("/rooms?a=1&b=2")!).value == "/signin?next=/rooms%3Fa%3D1%26b%3D2")
    }
}
