import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadLibrary
@testable import QuadPlatform
@testable import QuadServer

@Suite struct LibraryAPITests {
    static let json: HTTPFields = [.contentType: "application/json", .accept: "application/json"]
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"]

    /// Exactly `yyyy-MM-dd HH:mm:ss`: it reads back and writes out as the same text.
    static func isOriginalDate(_ text: String?) -> Bool {
        guard let text, text.count == 19, let date = LibraryDate.parse(text) else { return false }
        return LibraryDate.format(date) == text
    }

    static func send(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil,
        headers: HTTPFields = admin
    ) async throws -> TestResponse {
        try await client.execute(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
        ) { $0 }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(buffer: response.body))
    }

    static func add(_ client: any TestClientProtocol, _ title: String, author: String = "Someone") async throws -> Int {
        let response = try await send(client, .post, "/api/books", #"{"title": "\#(title)", "author": "\#(author)"}"#)
        #expect(response.status == .created)
        return try decode(OriginalBook.self, response).id
    }

    // MARK: The original clients

    @Test(arguments: TestDatabase.engines)
    func theOriginalClientsFlowWorksWithTrailingSlashesAndBothDateForms(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            // POST /books/ as the original app sent it (here with the admin's token; through an app link in
            // AppLinkTests).
            let created = try await Self.send(
                client, .post, "/api/books/",
                #"{"author": "Ash Maurya", "categories": "process, startups", "title": "Running Lean", "publisher": "O'REILLY"}"#
            )
            #expect(created.status == .created)
            let book = try Self.decode(OriginalBook.self, created)
            #expect(book.url == "/books/\(book.id)")
            #expect(book.categories == "process, startups")
            #expect(book.lastCheckedOut == nil && book.lastCheckedOutBy == nil)
            #expect(created.text.contains(#""lastCheckedOutBy":null"#))

            let list = try await Self.send(client, .get, "/api/books/")
            #expect(list.status == .ok)
            #expect(try Self.decode([OriginalBook].self, list).map(\.title) == ["Running Lean"])

            // Checking out: a partial PUT naming the person sets lastCheckedOut to now, in the original format.
            let out = try await Self.send(client, .put, "/api/books/\(book.id)/", #"{"lastCheckedOutBy": "Michele"}"#)
            #expect(out.status == .ok)
            let checkedOut = try Self.decode(OriginalBook.self, out)
            #expect(checkedOut.lastCheckedOutBy == "Michele")
            #expect(checkedOut.title == "Running Lean" && checkedOut.author == "Ash Maurya")
            let stamp = try #require(checkedOut.lastCheckedOut)
            #expect(Self.isOriginalDate(stamp))
            #expect(abs((LibraryDate.parse(stamp) ?? .distantPast).timeIntervalSince(app.clock.now)) < 5)
            #expect(out.json["status"] as? String == "on-loan")

            // A client sending the whole record back, its date in either form, changes only what differs.
            for date in ["2014-10-1 19:16:11", "2014-10-01 19:16:11 UTC"] {
                let full = try await Self.send(
                    client, .put, "/api/books/\(book.id)/",
                    #"{"author": "Ash Maurya", "categories": "process", "id": \#(book.id), "lastCheckedOut": "\#(date)", "lastCheckedOutBy": "Michele", "publisher": "O'REILLY", "title": "Running Lean", "url": "/books/\#(book.id)"}"#
                )
                #expect(full.status == .ok, "\(date)")
                let after = try Self.decode(OriginalBook.self, full)
                #expect(after.categories == "process")
                #expect(after.lastCheckedOut == stamp)
            }

            // Returning: lastCheckedOutBy null.
            let back = try await Self.send(client, .put, "/api/books/\(book.id)", #"{"lastCheckedOutBy": null}"#)
            #expect(back.status == .ok)
            #expect(try Self.decode(OriginalBook.self, back).lastCheckedOutBy == nil)
            #expect(back.json["status"] as? String == "available")
            let history = try #require(back.json["loans"] as? [[String: Any]])
            #expect(history.count == 1)
            #expect(history.first?["person"] as? String == "Michele")
            #expect(history.first?["returnedAt"] is String)

            // A POST carrying a loan from the original server keeps its date, given without zero padding.
            let imported = try await Self.send(
                client, .post, "/api/books",
                #"{"author": "Eric Ries", "categories": "", "title": "The Lean Startup", "publisher": "Crown Business", "lastCheckedOutBy": "Prolific Pablo", "lastCheckedOut": "2014-10-1 19:16:11"}"#
            )
            #expect(imported.status == .created)
            #expect(try Self.decode(OriginalBook.self, imported).lastCheckedOut == "2014-10-01 19:16:11")

            #expect(try await Self.send(client, .delete, "/api/books/\(book.id)/").status == .noContent)
            #expect(try await Self.send(client, .get, "/api/books/\(book.id)").status == .notFound)
        }
    }

    @Test func badInputIsA422NamingEachField() async throws {
        try await TestApp.run { _, client in
            let missing = try await Self.send(client, .post, "/api/books", #"{"title": "Only a title"}"#)
            #expect(missing.status == .unprocessableContent)
            #expect(missing.headers[.contentType] == "application/problem+json")
            let errors = try #require(missing.json["errors"] as? [[String: String]])
            #expect(errors.map { $0["field"] } == ["author"])

            let several = try await Self.send(
                client, .post, "/api/books", #"{"title": "", "author": "A", "isbn": "978-0-306-40615-8"}"#)
            #expect(several.status == .unprocessableContent)
            let fields = (several.json["errors"] as? [[String: String]])?.compactMap { $0["field"] }
            #expect(fields == ["title", "isbn"])

            let id = try await Self.add(client, "Kept")
            let bad = try await Self.send(
                client, .put, "/api/books/\(id)", #"{"author": " ", "lastCheckedOut": "soon"}"#)
            #expect(bad.status == .unprocessableContent)
            let get = try await Self.send(client, .get, "/api/books/\(id)")
            #expect(get.json["author"] as? String == "Someone")

            let isbn = try await Self.send(
                client, .put, "/api/books/\(id)", #"{"isbn": "978-0-306-40615-7", "categories": ["a", "b"]}"#)
            #expect(isbn.json["isbn"] as? String == "9780306406157")
            #expect(isbn.json["categories"] as? String == "a, b")

            #expect(try await Self.send(client, .get, "/api/books/999").status == .notFound)
            #expect(try await Self.send(client, .get, "/api/books?sort=sideways").status == .badRequest)
        }
    }

    @Test func onlySignedInPeopleChangeBooks() async throws {
        try await TestApp.run { app, client in
            let anonymous = try await Self.send(
                client, .post, "/api/books", #"{"title": "T", "author": "A"}"#, headers: Self.json)
            #expect(anonymous.status == .unauthorized)
            let ada = try await app.signedIn("ada")
            let signed = try await Self.send(
                client, .post, "/api/books", #"{"title": "T", "author": "A"}"#, headers: ada)
            #expect(signed.status == .created)
            #expect(try await Self.send(client, .get, "/api/books").status == .ok)
        }
    }

    // MARK: Loans

    @Test(arguments: TestDatabase.engines)
    func concurrentCheckoutsHaveExactlyOneWinner(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let id = try await Self.add(client, "Popular")
            var people: [HTTPFields] = []
            for person in 0..<20 { people.append(try await app.signedIn("reader\(person)")) }
            let everyone = people
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for headers in everyone {
                    group.addTask { try await Self.send(client, .post, "/api/books/\(id)/checkout", headers: headers) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let winners = answers.filter { $0.status == .ok }
            #expect(winners.count == 1)
            #expect(answers.filter { $0.status == .conflict }.count == 19)
            let holder = try #require(winners.first?.json["borrower"] as? String)
            let refusal = try #require(answers.first { $0.status == .conflict })
            #expect((refusal.json["detail"] as? String)?.contains(holder) == true)
            let loans = try await LibraryStore(database: app.platform.database, waiting: app.features.lines).loans(id)
            #expect(loans.count == 1)
        }
    }

    @Test func checkOutReturnAndWhoMayNameSomeoneElse() async throws {
        try await TestApp.run { app, client in
            let id = try await Self.add(client, "Dune")
            let ada = try await app.signedIn("ada")
            let grace = try await app.signedIn("grace")
            #expect(
                try await Self.send(client, .post, "/api/books/\(id)/checkout", headers: Self.json).status
                    == .unauthorized)
            let forbidden = try await Self.send(
                client, .post, "/api/books/\(id)/checkout", #"{"name": "Someone Else"}"#, headers: ada)
            #expect(forbidden.status == .forbidden)

            let mine = try await Self.send(client, .post, "/api/books/\(id)/checkout", headers: ada)
            #expect(mine.status == .ok)
            #expect(mine.json["borrower"] as? String == "Ada")
            #expect(Self.isOriginalDate(mine.json["dueAt"] as? String))
            let taken = try await Self.send(client, .post, "/api/books/\(id)/checkout", headers: grace)
            #expect(taken.status == .conflict)
            #expect((taken.json["detail"] as? String) == "Ada has this book.")

            // One loan policy: a member returns only their own loan, by the route or by a PUT.
            #expect(try await Self.send(client, .post, "/api/books/\(id)/return", headers: grace).status == .forbidden)
            let returnByPut = try await Self.send(
                client, .put, "/api/books/\(id)", #"{"lastCheckedOutBy": null}"#, headers: grace)
            #expect(returnByPut.status == .forbidden)
            #expect(try await Self.send(client, .post, "/api/books/\(id)/return", headers: ada).status == .ok)
            let again = try await Self.send(client, .post, "/api/books/\(id)/return", headers: ada)
            #expect(again.status == .conflict)
            // Nor does a member lend to someone else by naming them in a PUT, as the checkout route refuses it.
            let lent = try await Self.send(
                client, .put, "/api/books/\(id)", #"{"lastCheckedOutBy": "Grace Hopper"}"#, headers: ada)
            #expect(lent.status == .forbidden)
            let unchanged = try await Self.send(client, .get, "/api/books/\(id)")
            #expect(unchanged.json["status"] as? String == "available")

            let named = try await Self.send(
                client, .post, "/api/books/\(id)/checkout", #"{"name": "Margaret Hamilton"}"#, headers: Self.admin)
            #expect(named.status == .ok)
            #expect(named.json["lastCheckedOutBy"] as? String == "Margaret Hamilton")
            #expect((named.json["loans"] as? [Any])?.count == 2)

            let out = try await Self.send(client, .get, "/api/books?status=on-loan")
            #expect((try Self.decode([OriginalBook].self, out)).map(\.id) == [id])
            let available = try await Self.send(client, .get, "/api/books?status=available")
            #expect(try Self.decode([OriginalBook].self, available).isEmpty)
        }
    }

    /// The whole shelf, which every open app polls, is encoded once per change, yet always what a fresh reading
    /// would say: a checkout shows at once, a loan falling due shows when it does, and visitors get no names.
    @Test(arguments: TestDatabase.engines)
    func theShelfIsAlwaysCurrent(engine: Database.Engine) async throws {
        try await TestApp.run(engine, configure: { $0.loanDays = 7 }) { app, client in
            let id = try await Self.add(client, "Dune")
            let ada = try await app.signedIn("ada")
            func shelf(_ headers: HTTPFields) async throws -> (status: String?, borrower: String?, etag: String?) {
                let response = try await Self.send(client, .get, "/api/books", headers: headers)
                let book = (try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]])?
                    .first { $0["id"] as? Int == id }
                return (book?["status"] as? String, book?["borrower"] as? String, response.headers[.eTag])
            }
            let before = try await shelf(ada)
            #expect(before.status == "available")
            #expect(try await shelf(ada).etag == before.etag, "nothing changed: the same bytes")

            #expect(try await Self.send(client, .post, "/api/books/\(id)/checkout", headers: ada).status == .ok)
            let out = try await shelf(ada)
            #expect(out.status == "on-loan" && out.borrower == "Ada")
            #expect(out.etag != before.etag)
            let visitor = try await shelf(Self.json)
            #expect(visitor.status == "on-loan" && visitor.borrower == nil, "no names for visitors")

            app.clock.advance(by: .seconds(7 * 24 * 3600 + 60))
            #expect(try await shelf(ada).status == "overdue", "a loan falls due without any change")
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aStaleIfMatchIsRefusedSoNoEditIsLost(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { _, client in
            let id = try await Self.add(client, "Shared")
            let first = try await Self.send(client, .get, "/api/books/\(id)/")
            #expect(first.status == .ok)
            let etag = try #require(first.headers[.eTag])
            // Every record says its ETag, lists included, so a client editing from the list can send it.
            #expect(first.json["etag"] as? String == etag)
            let listed = try await Self.send(client, .get, "/api/books")
            let records = try JSONSerialization.jsonObject(with: Data(buffer: listed.body)) as? [[String: Any]]
            #expect(records?.first { $0["id"] as? Int == id }?["etag"] as? String == etag)
            var mine = Self.admin
            mine[.ifMatch] = etag
            let edit = try await Self.send(client, .put, "/api/books/\(id)", #"{"title": "Edited"}"#, headers: mine)
            #expect(edit.status == .ok)
            #expect(edit.headers[.eTag] != etag)
            // A second editor who loaded the book before that edit is refused, and the first edit stays.
            let stale = try await Self.send(client, .put, "/api/books/\(id)", #"{"title": "Overwrite"}"#, headers: mine)
            #expect(stale.status == .preconditionFailed)
            let now = try await Self.send(client, .get, "/api/books/\(id)")
            #expect(now.json["title"] as? String == "Edited")
            #expect(now.headers[.eTag] == edit.headers[.eTag])
            // The current ETag works; so does no If-Match at all.
            var fresh = Self.admin
            fresh[.ifMatch] = now.headers[.eTag] ?? ""
            #expect(
                try await Self.send(client, .put, "/api/books/\(id)", #"{"title": "Again"}"#, headers: fresh).status
                    == .ok)
            #expect(try await Self.send(client, .put, "/api/books/\(id)", #"{"publisher": "P"}"#).status == .ok)
            // If-None-Match on the book gives a 304.
            var cached = Self.json
            cached[.ifNoneMatch] = try await Self.send(client, .get, "/api/books/\(id)").headers[.eTag] ?? ""
            #expect(try await Self.send(client, .get, "/api/books/\(id)", headers: cached).status == .notModified)
        }
    }

    /// A client revalidating a book on loan sees it fall due (a new ETag), yet an edit made from the book as
    /// shown before it fell due is not refused: a due date passing is nobody's edit.
    @Test func fallingDueChangesTheETagButIsNobodysEdit() throws {
        let day: TimeInterval = 86_400
        let out = Date(timeIntervalSince1970: 1_800_000_000)
        let book = Book(
            id: 1, title: "Emma", author: "Jane Austen", addedAt: out,
            loan: Loan(person: "Ada", checkedOutAt: out, dueAt: out + 14 * day), lastCheckedOut: out,
            lastCheckedOutBy: "Ada")
        let shownOnLoan = Library.etag(book, now: out + day)
        let shownOverdue = Library.etag(book, now: out + 15 * day)
        #expect(shownOnLoan != shownOverdue)
        #expect(Library.record(book, now: out + 15 * day).etag == shownOverdue)
        try Library.check(ifMatch: shownOnLoan, book, now: out + 15 * day)
        try Library.check(ifMatch: shownOverdue, book, now: out + 15 * day)
        var edited = book
        edited.title = "Persuasion"
        #expect(throws: Problem.self) { try Library.check(ifMatch: shownOnLoan, edited, now: out + 15 * day) }
    }

    @Test func theLoanPeriodIsASetting() async throws {
        #expect(throws: (any Error).self) { try ServerConfiguration(environment: ["QUAD_LOAN_DAYS": "0"]) }
        #expect(try ServerConfiguration(environment: ["QUAD_LOAN_DAYS": "7"]).loanDays == 7)
        #expect(try ServerConfiguration(environment: [:]).loanDays == 14)
        try await TestApp.run(configure: { $0.loanDays = 7 }) { app, client in
            let id = try await Self.add(client, "Short loan")
            let out = try await Self.send(
                client, .post, "/api/books/\(id)/checkout", headers: try await app.signedIn("ada"))
            let due = try #require(LibraryDate.parse(out.json["dueAt"] as? String ?? ""))
            #expect(abs(due.timeIntervalSince(app.clock.now) - 7 * 86_400) < 5)
        }
    }

    // MARK: Deleting

    @Test(arguments: TestDatabase.engines)
    func deletingSeveralIsAllOrNothing(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let ada = try await app.signedIn("ada")
            let one = try await Self.add(client, "One")
            let two = try await Self.add(client, "Two")
            let three = try await Self.add(client, "Three")
            let refused = try await Self.send(
                client, .post, "/api/books/delete", #"{"ids": [\#(one), \#(two), 9999, 8888]}"#, headers: ada)
            #expect(refused.status == .notFound)
            #expect((refused.json["detail"] as? String)?.contains("8888, 9999") == true)
            let remaining = try Self.decode([OriginalBook].self, try await Self.send(client, .get, "/api/books"))
            #expect(remaining.count == 3)

            let done = try await Self.send(
                client, .post, "/api/books/delete/", #"{"ids": [\#(one), \#(two)]}"#, headers: ada)
            #expect(done.status == .ok)
            let left = try Self.decode([OriginalBook].self, try await Self.send(client, .get, "/api/books"))
            #expect(left.map(\.id) == [three])
        }
    }

    @Test(arguments: TestDatabase.engines)
    func cleanIsForAdminsOnly(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            _ = try await Self.add(client, "One")
            let member = try await app.signedIn("kier")
            #expect(try await Self.send(client, .delete, "/api/clean", headers: member).status == .forbidden)
            #expect(try await Self.send(client, .delete, "/api/clean", headers: Self.json).status == .unauthorized)
            #expect(try Self.decode([OriginalBook].self, try await Self.send(client, .get, "/api/books")).count == 1)
            let cleaned = try await Self.send(client, .delete, "/api/clean/", headers: Self.admin)
            #expect(cleaned.status == .ok)
            #expect(try Self.decode([OriginalBook].self, try await Self.send(client, .get, "/api/books")).isEmpty)
        }
    }

    // MARK: Listing and events

    @Test func theDemoShelfSortsSearchesAndFiltersByStatus() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { _, client in
            let newest = try Self.decode([OriginalBook].self, try await Self.send(client, .get, "/api/books"))
            #expect(newest.count >= 20)
            let oldest = try Self.decode(
                [OriginalBook].self, try await Self.send(client, .get, "/api/books?sort=oldest"))
            #expect(oldest.map(\.id) == newest.map(\.id).reversed())
            #expect(oldest.first?.title == "Running Lean")
            let lean = try Self.decode(
                [OriginalBook].self, try await Self.send(client, .get, "/api/books?q=lean%20startup"))
            #expect(Set(lean.map(\.title)) == ["Running Lean", "The Lean Startup"])
            let overdue = try await Self.send(client, .get, "/api/books?status=overdue")
            #expect(try Self.decode([OriginalBook].self, overdue).map(\.title) == ["The Mythical Man-Month"])
            let onLoan = try Self.decode(
                [OriginalBook].self, try await Self.send(client, .get, "/api/books?status=on-loan"))
            #expect(onLoan.count == 3)
        }
    }

    @Test func everyChangePublishesABookEvent() async throws {
        try await TestApp.run { app, client in
            let ada = try await app.signedIn("ada")
            try await app.listening {
                let watcher = app.platform.events.subscribe(after: nil, types: [.book])
                var events = watcher.events.makeAsyncIterator()
                let id = try await Self.add(client, "Evented")
                _ = try await Self.send(client, .put, "/api/books/\(id)", #"{"title": "Renamed"}"#)
                _ = try await Self.send(client, .post, "/api/books/\(id)/checkout", headers: ada)
                _ = try await Self.send(client, .post, "/api/books/\(id)/return", headers: ada)
                _ = try await Self.send(client, .delete, "/api/books/\(id)")
                var kinds: [Library.Change.Kind] = []
                for _ in 0..<5 {
                    let event = try #require(await events.next())
                    let change = try JSONDecoder().decode(Library.Change.self, from: Data(event.data.utf8))
                    #expect(change.id == id)
                    kinds.append(change.change)
                }
                #expect(kinds == [.created, .updated, .checkedOut, .returned, .deleted])
                watcher.cancel()
            }
        }
    }
}
