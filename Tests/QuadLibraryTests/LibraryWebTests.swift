import Foundation
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

/// The `/library` pages with their forms alone (no JavaScript), as a browser without scripts uses them.
@Suite struct LibraryWebTests {
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    /// A signed-in browser: session and CSRF cookies, French unless said otherwise.
    static func browser(_ app: TestApp, _ username: String, language: String = "fr") async throws -> HTTPFields {
        _ = try await app.signedIn(username)
        let (token, _) = try await app.features.accounts.sessions.start(for: username, kind: .web)
        return [
            .cookie: "quad_session=\(token); quad_csrf=\(csrf)", .acceptLanguage: language,
            .contentType: "application/x-www-form-urlencoded", .accept: "text/html",
        ]
    }

    static func post(
        _ client: any TestClientProtocol, _ uri: String, _ form: String, headers: HTTPFields
    ) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: form)) { $0 }
    }

    @Test func aMissingAuthorIsShownNextToItsFieldInFrenchKeepingWhatWasTyped() async throws {
        try await TestApp.run { app, client in
            let headers = try await Self.browser(app, "ada")
            let page = try await Self.post(
                client, "/library/books", "csrf=\(Self.csrf)&title=Le+Horla&author=&publisher=Ollendorff",
                headers: headers)
            #expect(page.status == .unprocessableContent)
            #expect(page.text.contains(#"<p class="field-error" id="book-author-error">Saisissez un auteur.</p>"#))
            #expect(page.text.contains(#"value="Le Horla""#))
            #expect(page.text.contains(#"value="Ollendorff""#))
            #expect(!page.text.contains("book-title-error"))
            #expect(
                try await LibraryStore(database: app.platform.database, waiting: app.features.lines).all().isEmpty)

            let added = try await Self.post(
                client, "/library/books", "csrf=\(Self.csrf)&title=Le+Horla&author=Guy+de+Maupassant",
                headers: headers)
            #expect(added.status == .seeOther || added.status == .found)
            #expect(added.headers[.location]?.hasPrefix("/library/books/") == true)
        }
    }

    @Test func formsWithoutTheCSRFTokenAreRefused() async throws {
        try await TestApp.run { app, client in
            let headers = try await Self.browser(app, "ada")
            let refused = try await Self.post(client, "/library/books", "title=T&author=A", headers: headers)
            #expect(refused.status == .forbidden)
            #expect(
                try await LibraryStore(database: app.platform.database, waiting: app.features.lines).all().isEmpty)
        }
    }

    @Test func checkOutReturnAndDeleteSeveralWithForms() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let headers = try await Self.browser(app, "ada", language: "en")
            let store = LibraryStore(database: app.platform.database, waiting: app.features.lines)
            let books = try await store.all()
            let shelf = try #require(books.first { $0.loan == nil })
            let out = try await Self.post(
                client, "/library/books/\(shelf.id)/checkout", "csrf=\(Self.csrf)", headers: headers)
            #expect(out.status == .seeOther || out.status == .found)
            #expect(try await store.find(shelf.id)?.loan?.person == "Ada Lovelace")

            let page = try await client.execute(uri: "/library/books/\(shelf.id)", method: .get, headers: headers) {
                $0
            }
            #expect(page.text.contains("With Ada Lovelace since"))
            // Taken: the page says who has it.
            let taken = try await Self.post(
                client, "/library/books/\(shelf.id)/checkout", "csrf=\(Self.csrf)", headers: headers)
            #expect(taken.status == .conflict)
            #expect(taken.text.contains("Ada Lovelace has this book."))

            _ = try await Self.post(client, "/library/books/\(shelf.id)/return", "csrf=\(Self.csrf)", headers: headers)
            #expect(try await store.find(shelf.id)?.loan == nil)

            // Books on the shelf: one someone else has is theirs or an admin's to delete (PeopleOwnTheirThingsTests).
            let ids = try await store.all().filter { $0.loan == nil }.prefix(3).map(\.id)
            let form = "csrf=\(Self.csrf)" + ids.map { "&ids%5B%5D=\($0)" }.joined()
            let deleted = try await Self.post(client, "/library/delete", form, headers: headers)
            #expect(deleted.headers[.location] == "/library?done=deleted&count=3")
            #expect(try await store.all().count == books.count - 3)
        }
    }

    @Test func datesAreShownInTheCampusTimeZoneAndTheLanguageOfThePage() async throws {
        // Late in the UTC evening of the day before the tests' day: the next day in Melbourne.
        let utc = {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = .gmt
            return calendar
        }()
        let yesterday = try #require(utc.date(byAdding: .day, value: -1, to: TestTime.start))
        let lateEvening = try #require(utc.date(bySettingHour: 23, minute: 30, second: 0, of: yesterday))
        try await TestApp.run(at: lateEvening) { app, client in
            // The campus (set for the Timetable) is in Melbourne; a checkout late in the UTC evening is the next
            // day there, and the page must say so, while the API keeps the original's UTC text.
            let melbourne = try #require(TimeZone(identifier: "Australia/Melbourne"))
            try await app.features.timetable.store.setCampus(
                CampusSettings(
                    name: "Clayton", timeZone: melbourne, semesterStart: LocalDate(year: 2026, month: 3, day: 2),
                    teachingWeeks: 12, breaks: []))
            let library = app.features.library
            var input = BookInput()
            input.title = .value("Dune")
            input.author = .value("Frank Herbert")
            let ada = Person(username: "ada", displayName: "Ada", role: .member)
            let book = try await library.create(input, by: ada)
            _ = try await library.checkOut(book.id, by: ada, name: nil)
            // Who has a book is for people signed in.
            let grace = try await Self.browser(app, "grace")
            // The page is read a day later.
            app.clock.advance(by: .seconds(86_400))
            var campus = Calendar(identifier: .gregorian)
            campus.timeZone = melbourne
            let day = campus.component(.day, from: lateEvening)
            #expect(day != utc.component(.day, from: lateEvening))
            let months = (en: DateFormatter(), fr: DateFormatter())
            months.fr.locale = Locale(identifier: "fr")
            months.en.locale = Locale(identifier: "en")
            let month = campus.component(.month, from: lateEvening) - 1

            var english = try await client.execute(
                uri: "/library/books/\(book.id)", method: .get, headers: [.acceptLanguage: "en"]
            ) { $0 }
            #expect(!english.text.contains("Ada") && english.text.contains("On loan since \(day) "))
            var inEnglish = grace
            inEnglish[.acceptLanguage] = "en"
            english = try await client.execute(uri: "/library/books/\(book.id)", method: .get, headers: inEnglish) {
                $0
            }
            #expect(english.text.contains("With Ada since \(day) \(months.en.monthSymbols[month])<"))
            let french = try await client.execute(uri: "/library/books/\(book.id)", method: .get, headers: grace) { $0 }
            let frenchDay = day == 1 ? "1er" : String(day)
            #expect(french.text.contains("Chez Ada depuis le \(frenchDay) \(months.fr.monthSymbols[month])<"))

            let api = try await client.execute(uri: "/api/books/\(book.id)", method: .get) { $0 }
            // The original's UTC text, to the minute (the clock ran on for a moment before the checkout).
            let stamp = try #require(api.json["lastCheckedOut"] as? String)
            #expect(stamp.hasPrefix(String(LibraryDate.format(lateEvening).prefix(16))) && stamp.contains(" 23:30:"))
        }
    }

    @Test func anEditorWhoseBookChangedMeanwhileIsToldAndNothingIsOverwritten() async throws {
        try await TestApp.run { app, client in
            let headers = try await Self.browser(app, "ada", language: "en")
            let library = app.features.library
            var input = BookInput()
            input.title = .value("Emma")
            input.author = .value("Jane Austen")
            let book = try await library.create(input, by: Person(username: "ada", displayName: "Ada", role: .member))
            let editor = try await client.execute(
                uri: "/library/books/\(book.id)/edit", method: .get, headers: headers
            ) { $0 }
            #expect(editor.text.contains(#"name="etag""#))
            let seen =
                Library.etag(book, now: app.clock.now).addingPercentEncoding(withAllowedCharacters: .alphanumerics)
                ?? ""

            // Grace saves first; Ada's form still carries the ETag of what she opened.
            var other = BookInput()
            other.publisher = .value("John Murray")
            _ = try await library.update(
                book.id, other, ifMatch: nil, by: Person(username: "grace", displayName: "Grace", role: .member))
            let stale = try await Self.post(
                client, "/library/books/\(book.id)",
                "csrf=\(Self.csrf)&etag=\(seen)&title=Emma+annotated&author=Jane+Austen&publisher=&categories=&isbn=",
                headers: headers)
            #expect(stale.status == .preconditionFailed)
            #expect(stale.text.contains("Someone changed this book meanwhile."))
            // The editor shows the book as it is now.
            #expect(stale.text.contains(#"value="John Murray""#))
            let now = try await library.find(book.id)
            #expect(now.title == "Emma" && now.publisher == "John Murray")
        }
    }

    @Test func theListSearchesTitlesAuthorsAndCategories() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { _, client in
            func titles(_ query: String) async throws -> [String] {
                let page = try await client.execute(
                    uri: "/library?q=\(query)", method: .get, headers: [.acceptLanguage: "en"]
                ) { $0 }
                #expect(page.status == .ok)
                return page.text.components(separatedBy: #"<span class="book-title">"#).dropFirst().map {
                    String($0.prefix { $0 != "<" })
                }
            }
            #expect(Set(try await titles("lean%20startup")) == ["Running Lean", "The Lean Startup"])
            // As the search form sends it: a space is "+", and a plus typed is "%2B".
            #expect(Set(try await titles("lean+startup")) == ["Running Lean", "The Lean Startup"])
            #expect(try await titles("lean%2Bstartup").isEmpty)
            #expect(try await titles("saint-exupery") == ["Le Petit Prince"])
            #expect(try await titles("zzzz").isEmpty)
            let none = try await client.execute(uri: "/library?q=zzzz", method: .get, headers: [.acceptLanguage: "fr"])
            {
                $0
            }
            #expect(none.text.contains(#"id="library-no-match""#))
        }
    }

    @Test func theSortIsRememberedForThePerson() async throws {
        try await TestApp.run(at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) { app, client in
            let headers = try await Self.browser(app, "ada", language: "en")
            func firstTitle(_ uri: String) async throws -> String {
                let page = try await client.execute(uri: uri, method: .get, headers: headers) { $0 }
                let marker = #"<span class="book-title">"#
                let start = try #require(page.text.range(of: marker)).upperBound
                return String(page.text[start...].prefix { $0 != "<" })
            }
            #expect(try await firstTitle("/library") == "Le Petit Prince")
            #expect(try await firstTitle("/library?sort=oldest") == "Running Lean")
            #expect(try await firstTitle("/library") == "Running Lean")
            let store = LibraryStore(database: app.platform.database, waiting: app.features.lines)
            #expect(try await store.sort(for: "ada") == .oldest)
        }
    }
}
