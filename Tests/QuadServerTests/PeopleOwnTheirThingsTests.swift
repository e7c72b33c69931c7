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
@testable import QuadServer
@testable import QuadTimetable

/// Loans and keys belong to people: a book on loan is deleted only by its borrower or an admin, a removed person's
/// loans go back (to the next in line), and calendar addresses and app links end with their person's password,
/// student id or account. Each of these was open before (the standing-firm audit).
@Suite struct PeopleOwnTheirThingsTests {
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"]

    static func send(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil,
        as headers: HTTPFields = admin
    ) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        { $0 }
    }

    static func addBook(_ client: any TestClientProtocol, _ title: String) async throws -> Int {
        let response = try await send(client, .post, "/api/books", #"{"title": "\#(title)", "author": "Someone"}"#)
        #expect(response.status == .created)
        return try JSONDecoder().decode(OriginalBook.self, from: Data(buffer: response.body)).id
    }

    static func path(_ url: String) -> String { String(url[url.range(of: "/api/")!.lowerBound...]) }

    @Test(arguments: TestDatabase.engines)
    func aBookOnLoanOrHeldForTheLineIsNotAnyonesToDelete(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let ada = try await app.signedIn("ada")
            let grace = try await app.signedIn("grace")
            let kier = try await app.signedIn("kier")
            let lent = try await Self.addBook(client, "Lent")
            #expect(try await Self.send(client, .post, "/api/books/\(lent)/checkout", as: ada).status == .ok)
            // Grace cannot make Ada's loan vanish, one book or several at once.
            let refused = try await Self.send(client, .delete, "/api/books/\(lent)", as: grace)
            #expect(refused.status == .conflict)
            #expect((refused.json["type"] as? String)?.hasSuffix("book-on-loan") == true)
            #expect((refused.json["detail"] as? String)?.contains("Ada") == true)
            let bulk = try await Self.send(client, .post, "/api/books/delete", #"{"ids": [\#(lent)]}"#, as: grace)
            #expect(bulk.status == .conflict)
            #expect(try await app.features.library.store.find(lent)?.loan?.username == "ada")
            // Ada, whose loan it is, may.
            #expect(try await Self.send(client, .delete, "/api/books/\(lent)", as: ada).status == .noContent)

            // Returned while Grace waits: held for her, it is an admin's to delete, not even hers.
            let held = try await Self.addBook(client, "Held")
            #expect(try await Self.send(client, .post, "/api/books/\(held)/checkout", as: ada).status == .ok)
            #expect(try await Self.send(client, .post, "/api/books/\(held)/holds", as: grace).status.code == 201)
            #expect(try await Self.send(client, .post, "/api/books/\(held)/return", as: ada).status == .ok)
            for person in [kier, grace] {
                let answer = try await Self.send(client, .delete, "/api/books/\(held)", as: person)
                #expect(answer.status == .conflict)
                #expect((answer.json["type"] as? String)?.hasSuffix("held-for-line") == true)
            }
            #expect(try await Self.send(client, .delete, "/api/books/\(held)").status == .noContent)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aRemovedPersonsLoansGoBackAndPassToTheLineNotToTheirNamesake(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let ada = try await app.signedIn("ada")
            let grace = try await app.signedIn("grace")
            let book = try await Self.addBook(client, "Kept Too Long")
            let other = try await Self.addBook(client, "Also Hers")
            for id in [book, other] {
                #expect(try await Self.send(client, .post, "/api/books/\(id)/checkout", as: ada).status == .ok)
            }
            #expect(try await Self.send(client, .post, "/api/books/\(book)/holds", as: grace).status.code == 201)

            #expect(try await Self.send(client, .delete, "/api/people/ada").status == .noContent)
            let store = app.features.library.store
            #expect(try await store.find(other)?.loan == nil)
            #expect(try await store.find(book)?.loan == nil)
            let graces = try await app.features.waiting.notifications(of: "grace")
            #expect(graces.offers.map(\.thing) == [String(book)])
            // Someone new called ada has nothing of the first one's.
            _ = try await app.signedIn("ada")
            #expect(try await app.features.waiting.notifications(of: "ada").loans.isEmpty)
            #expect(try await store.loans(of: "ada").isEmpty)
            _ = ada
        }
    }

    @Test(arguments: TestDatabase.engines)
    func calendarAddressesAndAppLinksEndWithTheirPersonsPasswordStudentIdOrAccount(
        engine: Database.Engine
    ) async throws {
        try await TestApp.run(engine) { app, client in
            try await TimetableDemo.load(TimetableStore(database: app.platform.database), now: app.clock.now)
            _ = try await app.features.accounts.people.create(
                Person(username: "kier", displayName: "Kier", role: .member, studentId: "305491"),
                password: "password-kier")
            let kier = try await app.signedIn("kier")
            let ada = try await app.signedIn("ada")
            let kiers = Self.path(
                try await Self.send(client, .get, "/api/me/calendar", as: kier).json["url"] as! String)
            let adas = Self.path(try await Self.send(client, .get, "/api/me/calendar", as: ada).json["url"] as! String)
            for feed in [kiers, adas] {
                let answer = try await Self.send(client, .get, feed, as: [:])
                #expect(answer.status == .ok)
                #expect(answer.headers[.cacheControl] == "private, no-store")
            }

            // Student 305491 moves from Kier to Ada: Kier's old address no longer serves her bookings.
            #expect(try await Self.send(client, .patch, "/api/people/kier", #"{"studentId": ""}"#).status == .ok)
            #expect(try await Self.send(client, .patch, "/api/people/ada", #"{"studentId": "305491"}"#).status == .ok)
            #expect(try await Self.send(client, .get, kiers, as: [:]).status == .notFound)
            let adasStudent = Self.path(
                try await Self.send(client, .get, "/api/me/calendar", as: ada).json["url"] as! String)
            #expect(adasStudent != kiers)
            #expect(try await Self.send(client, .get, adasStudent, as: [:]).status == .ok)

            // A password reset ends her calendar address and app links, unless the admin keeps them.
            let link = try await client.appLink(for: ada, label: "iPad")
            #expect(try await Self.send(client, .get, link + "/books", as: [:]).status == .ok)
            #expect(
                try await Self.send(
                    client, .patch, "/api/people/ada", #"{"password": "kept-keys-password", "keepKeys": true}"#
                ).status == .ok)
            #expect(try await Self.send(client, .get, adasStudent, as: [:]).status == .ok)
            #expect(try await Self.send(client, .get, link + "/books", as: [:]).status == .ok)
            #expect(
                try await Self.send(client, .patch, "/api/people/ada", #"{"password": "a-brand-new-password"}"#)
                    .status == .ok)
            #expect(try await Self.send(client, .get, adasStudent, as: [:]).status == .notFound)
            #expect(try await Self.send(client, .get, link + "/books", as: [:]).status.code == 401)

            // Removed and made again under the same name: the old address reads nothing.
            let grace = try await app.signedIn("grace")
            let graces = Self.path(
                try await Self.send(client, .get, "/api/me/calendar", as: grace).json["url"] as! String)
            #expect(try await Self.send(client, .delete, "/api/people/grace").status == .noContent)
            _ = try await app.signedIn("grace")
            #expect(try await Self.send(client, .get, graces, as: [:]).status == .notFound)
        }
    }

    /// Borrowers' names are for members and admins: a feed account (a car park's sensor) reads a book's status only.
    @Test func aFeedAccountSeesNoBorrowersName() async throws {
        try await TestApp.run { app, client in
            let ada = try await app.signedIn("ada")
            let feed = try await app.signedIn("sensor", role: .feed)
            let book = try await Self.addBook(client, "Watched")
            #expect(try await Self.send(client, .post, "/api/books/\(book)/checkout", as: ada).status == .ok)
            for path in ["/api/books", "/api/books/\(book)"] {
                let seen = try await Self.send(client, .get, path, as: feed)
                #expect(seen.status == .ok)
                #expect(!seen.text.contains("Ada"), "\(path): \(seen.text.prefix(300))")
                #expect(seen.text.contains("on-loan"))
                let member = try await Self.send(client, .get, path, as: ada)
                #expect(member.text.contains("Ada"), "\(path) as a member names the borrower")
            }
        }
    }

    /// A name chosen at sign-up may not claim a role, nor copy someone's.
    @Test(arguments: ["Administrator", "Quad Support", "  ADMIN  ", "Grace Hopper", "grace hopper"])
    func aSignUpNameClaimsNoRoleAndCopiesNoOne(name: String) async throws {
        try await TestApp.run(configure: { $0.openSignup = true }) { app, client in
            _ = try await app.features.accounts.people.create(
                Person(username: "grace", displayName: "Grace Hopper", role: .member), password: "password-grace")
            let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
            let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
            let answer = try await client.execute(
                uri: "/signup", method: .post,
                headers: [
                    .contentType: "application/x-www-form-urlencoded", .cookie: "quad_csrf=\(csrf)",
                    .acceptLanguage: "en",
                ],
                body: ByteBuffer(
                    string: "csrf=\(csrf)&username=mallory&displayName=\(encoded)&password=a-long-enough-password")
            ) { $0 }
            #expect(answer.status == .unprocessableContent, "\(name): \(answer.status)")
            #expect(try await app.person("mallory") == nil)
        }
    }
}
