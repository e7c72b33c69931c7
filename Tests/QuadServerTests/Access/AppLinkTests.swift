import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// Personal app links: the original apps, given one as their base URL, work exactly as the reference says,
/// as the link's person with that person's rights; nothing anonymous changes data.
@Suite struct AppLinkTests {
    static let json: HTTPFields = [.contentType: "application/json", .accept: "application/json"]

    @Test(arguments: TestDatabase.engines)
    func theOriginalLibraryAppThroughALink(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let michele = try await app.signedIn("michele")  // display name "Michele"
            let base = try await client.appLink(for: michele, label: "Library on my iPad")
            #expect(base.hasPrefix("/legacy/") && base.count > 40)
            let created = try await client.execute(
                uri: base + "/books/", method: .post, headers: Self.json,
                body: ByteBuffer(
                    string:
                        #"{"author": "Ash Maurya", "categories": "lean", "title": "Running Lean", "publisher": "O'REILLY"}"#
                )
            ) { $0 }
            #expect(created.status == .created)
            let book = try JSONDecoder().decode(OriginalBook.self, from: Data(buffer: created.body))
            let list = try await client.execute(uri: base + "/books", method: .get, headers: Self.json) { $0 }
            #expect(try JSONDecoder().decode([OriginalBook].self, from: Data(buffer: list.body)).map(\.id) == [book.id])
            // Checking out to oneself, as the original did it; to someone else is refused, as for the person.
            let out = try await client.execute(
                uri: base + "/books/\(book.id)/", method: .put, headers: Self.json,
                body: ByteBuffer(string: #"{"lastCheckedOutBy": "Michele"}"#)
            ) { $0 }
            #expect(out.status == .ok)
            #expect(
                try JSONDecoder().decode(OriginalBook.self, from: Data(buffer: out.body)).lastCheckedOutBy == "Michele")
            let lent = try await client.execute(
                uri: base + "/books/\(book.id)", method: .put, headers: Self.json,
                body: ByteBuffer(string: #"{"lastCheckedOutBy": null}"#)
            ) { $0 }
            #expect(lent.status == .ok)
            try await client.execute(
                uri: base + "/books/\(book.id)", method: .put, headers: Self.json,
                body: ByteBuffer(string: #"{"lastCheckedOutBy": "Grace Hopper"}"#)
            ) { #expect($0.status == .forbidden) }
            // The admin's `DELETE /clean` is not the member's.
            try await client.execute(uri: base + "/clean", method: .delete, headers: Self.json) {
                #expect($0.status == .forbidden)
            }
            try await client.execute(uri: base + "/books/\(book.id)", method: .delete, headers: Self.json) {
                #expect($0.status == .noContent)
            }
        }
    }

    @Test func aLinkReachesOnlyTheOriginalRoutesAndEndsWhenRevokedOrItsPersonGoes() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let ada = try await app.signedIn("ada")
            let base = try await client.appLink(for: ada)
            try await client.execute(uri: base + "/rooms.json", method: .get, headers: Self.json) {
                #expect($0.status == .ok)
            }
            // Not the rest of the API: a link is not a session.
            for (method, path) in [(HTTPRequest.Method.get, "/me"), (.post, "/me/app-links"), (.get, "/people")] {
                try await client.execute(
                    uri: base + path, method: method, headers: Self.json, body: ByteBuffer(string: #"{"label": "x"}"#)
                ) { #expect($0.status == .forbidden, "\(path)") }
            }
            let links = try await client.execute(uri: "/api/me/app-links", method: .get, headers: ada) { $0 }
            let listed = try #require(links.json["links"] as? [[String: Any]])
            #expect(listed.count == 1 && listed.first?["label"] as? String == "Test app")
            #expect(!links.text.contains(base.dropFirst("/legacy/".count)))  // the key is shown once only
            let id = try #require(listed.first?["id"] as? String)
            try await client.execute(uri: "/api/me/app-links/\(id)", method: .delete, headers: ada) {
                #expect($0.status == .noContent)
            }
            try await client.execute(
                uri: base + "/bookRoom.json", method: .post, headers: Self.json,
                body: ByteBuffer(string: #"{"name": "Ljerka"}"#)
            ) { #expect($0.status == .unauthorized) }

            // An admin makes one for Grace; removing Grace ends it.
            let created = try await client.execute(
                uri: "/api/people/grace/app-links", method: .post,
                headers: [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"label": "Grace's Rooms app"}"#)
            ) { $0 }
            #expect(created.status == .created)
            let graces = try #require(URLComponents(string: created.json["url"] as? String ?? "")?.path)
            try await client.execute(uri: graces + "/rooms.json", method: .get) { #expect($0.status == .ok) }
            try await app.features.accounts.remove("grace")
            try await client.execute(uri: graces + "/rooms.json", method: .get) { #expect($0.status == .unauthorized) }
            try await client.execute(uri: "/legacy/not-a-key/rooms.json", method: .get) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    @Test func feedAccountsGetNoLinkAndNothingAnonymousChangesData() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let feed = try await app.signedIn("feeder", role: .feed)
            try await client.execute(
                uri: "/api/me/app-links", method: .post, headers: feed, body: ByteBuffer(string: #"{"label": "x"}"#)
            ) { #expect($0.status == .forbidden) }
            // The issue's anonymous writes: each is refused now.
            for (method, path, body) in [
                (HTTPRequest.Method.delete, "/api/books/1", ""), (.put, "/api/books/2", #"{"lastCheckedOutBy": "X"}"#),
                (.post, "/api/books", #"{"title": "T", "author": "A"}"#), (.post, "/api/book", #"{"name": "Ljerka"}"#),
            ] {
                try await client.execute(uri: path, method: method, headers: Self.json, body: ByteBuffer(string: body))
                {
                    #expect($0.status == .unauthorized, "\(method) \(path)")
                }
            }
        }
    }
}

/// A person who does not use the API makes and revokes their links on `/account`.
@Suite struct AccountPageTests {
    @Test func aPersonMakesALinkOnTheirAccountPageAndRevokesIt() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            var browser = try await CSRFTests.browser(app, "ada")
            browser[.accept] = "text/html"
            browser[.acceptLanguage] = "fr"
            let page = try await client.execute(uri: "/account", method: .get, headers: browser) { $0 }
            #expect(page.status == .ok && page.text.contains("Liens d’application"))
            var form = browser
            form[.contentType] = "application/x-www-form-urlencoded"
            let created = try await client.execute(
                uri: "/account/app-links", method: .post, headers: form,
                body: ByteBuffer(string: "csrf=\(CSRFTests.token)&label=Library+sur+mon+iPad")
            ) { $0 }
            #expect(created.status == .created)
            #expect(created.headers[.cacheControl] == "no-store")
            let pattern = try NSRegularExpression(pattern: #"value="http://localhost(/legacy/[A-Za-z0-9_-]{43})""#)
            let match = try #require(
                pattern.firstMatch(in: created.text, range: NSRange(created.text.startIndex..., in: created.text)))
            let base = String(created.text[Range(match.range(at: 1), in: created.text)!])
            try await client.execute(uri: base + "/books", method: .get) { #expect($0.status == .ok) }
            // Shown once: the page shows the label from now on, never the key again.
            let again = try await client.execute(uri: "/account", method: .get, headers: browser) { $0.text }
            #expect(again.contains("Library sur mon iPad") && !again.contains(base))
            let id = try #require(try await app.features.accounts.appLinks.list(for: "ada").first?.id)
            let revoked = try await client.execute(
                uri: "/account/app-links/\(id)/revoke", method: .post, headers: form,
                body: ByteBuffer(string: "csrf=\(CSRFTests.token)")
            ) { $0 }
            #expect(revoked.status == .seeOther && revoked.headers[.location] == "/account?done=revoked#app-links")
            try await client.execute(uri: base + "/books", method: .get) { #expect($0.status == .unauthorized) }
            // An empty label is said next to its field.
            let empty = try await client.execute(
                uri: "/account/app-links", method: .post, headers: form,
                body: ByteBuffer(string: "csrf=\(CSRFTests.token)&label=")
            ) { $0 }
            #expect(empty.status == .unprocessableContent && empty.text.contains("app-link-label-error"))
        }
    }
}
