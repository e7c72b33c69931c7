import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// A page asked for again, by the same person with the same cookies, is answered from the router's own answer,
/// kept (`PageCache`), over a real connection: until anything changes, and never across a sign-out.
@Suite struct KeptPagesTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    /// A browser's cookies for the session of `bearer` (the same token).
    static func browser(_ bearer: HTTPFields) throws -> HTTPFields {
        let token = String(try #require(bearer[.authorization]).dropFirst("Bearer ".count))
        return [.cookie: "quad_csrf=\(csrf); quad_session=\(token); quad_lang=en"]
    }

    /// How many answers the fast path gave from a kept page.
    static func keptAnswers(_ logs: LogLines) -> Int {
        logs.all.split(separator: "\n").filter { $0.contains(#""page": kept"#) }.count
    }

    @Test func aPageIsKeptUntilABookingChangesIt() async throws {
        let logs = LogLines()
        try await TestApp.run(configure: { $0.loadDemoData = true }, live: true, logger: logs.logger) { app, client in
            let bearer = try await app.signedIn("kier")
            let kier = try Self.browser(bearer)
            // The first request teaches the fast path the session; the second is rendered and kept.
            _ = try await client.execute(uri: "/rooms", method: .get, headers: kier)
            let rendered = try await client.execute(uri: "/rooms", method: .get, headers: kier)
            #expect(Self.keptAnswers(logs) == 0)
            // A second on: a page drawn again would say so (`data-updated-at`); the kept one is the same bytes.
            app.clock.advance(by: .seconds(1))
            let kept = try await client.execute(uri: "/rooms", method: .get, headers: kier)
            #expect(Self.keptAnswers(logs) == 1)
            #expect(rendered.status == .ok && kept.status == .ok)
            #expect(kept.body == rendered.body)
            let fields: [HTTPField.Name] = [
                .contentType, .contentLength, .cacheControl, .contentSecurityPolicy, .xContentTypeOptions,
            ]
            for field in fields { #expect(kept.headers[field] == rendered.headers[field], "\(field)") }
            #expect(kept.headers[values: .vary] == rendered.headers[values: .vary])
            #expect(kept.headers[.date] != nil)
            #expect(rendered.headers[PageCache.keepHeader] == nil && kept.headers[PageCache.keepHeader] == nil)
            #expect(!kept.text.contains("data-booking-id"))

            // Another way of asking (gzip) is another answer, never the plain one's bytes.
            var gzip = kier
            gzip[.acceptEncoding] = "gzip"
            let zipped = try await client.execute(uri: "/rooms", method: .get, headers: gzip)
            #expect(zipped.headers[.contentEncoding] == "gzip")
            #expect(try await client.execute(uri: "/rooms", method: .get, headers: kier).body == rendered.body)

            // Kier books through the API: his next page shows it.
            #expect(try await client.book("helmold", as: bearer).status == .created)
            let after = try await client.execute(uri: "/rooms", method: .get, headers: kier)
            #expect(after.text.contains("data-booking-id") && after.text.contains(#"data-room-id="helmold""#))
        }
    }

    /// A change this instance did not make (another instance's, announced on the hub) drops the kept pages too.
    @Test func aChangeAnnouncedOnTheHubDropsTheKeptPages() async throws {
        let logs = LogLines()
        try await TestApp.run(configure: { $0.loadDemoData = true }, live: true, logger: logs.logger) { app, client in
            let bearer = try await app.signedIn("kier")
            let kier = try Self.browser(bearer)
            for _ in 0..<3 { _ = try await client.execute(uri: "/rooms", method: .get, headers: kier) }
            #expect(Self.keptAnswers(logs) == 1)
            // Stored without a word to anyone: the kept page does not know of it.
            let person = try #require(try await app.features.accounts.people.find("kier"))
            let (booking, spots) = try await app.features.rooms.store.book(roomId: "helmold", owner: person)
            #expect(!(try await client.execute(uri: "/rooms", method: .get, headers: kier).text.contains(booking.id)))
            #expect(Self.keptAnswers(logs) == 2)
            // Announced, as another instance announces its changes: the next page is drawn again and shows it.
            await app.features.rooms.changed("helmold", spots: spots, .spots)
            #expect(try await client.execute(uri: "/rooms", method: .get, headers: kier).text.contains(booking.id))
            #expect(Self.keptAnswers(logs) == 2)
        }
    }

    /// After a sign-out, the same cookies get the page of someone signed out, never the kept page of the person.
    @Test func aSignOutIsNeverAnsweredWithTheKeptPage() async throws {
        let logs = LogLines()
        try await TestApp.run(configure: { $0.loadDemoData = true }, live: true, logger: logs.logger) { app, client in
            let bearer = try await app.signedIn("kier")
            let kier = try Self.browser(bearer)
            for _ in 0..<3 { _ = try await client.execute(uri: "/rooms", method: .get, headers: kier) }
            #expect(Self.keptAnswers(logs) == 1)
            var form = kier
            form[.contentType] = "application/x-www-form-urlencoded"
            let signedOut = try await client.execute(
                uri: "/signout", method: .post, headers: form, body: ByteBuffer(string: "csrf=\(Self.csrf)"))
            #expect(signedOut.status == .seeOther)
            let page = try await client.execute(uri: "/rooms", method: .get, headers: kier)
            #expect(page.status == .ok && !page.text.contains("my-bookings"))
            #expect(Self.keptAnswers(logs) == 1)
        }
    }
}
