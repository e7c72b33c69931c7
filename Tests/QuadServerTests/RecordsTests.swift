import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadLibrary
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer

/// Import and export of rooms, people and books as CSV files (`PUT`/`GET /api/records/{kind}`, `/admin/records`): every
/// row checked first, all applied or none, the same file twice changing nothing, and an export that imports exactly.
@Suite struct RecordsTests {
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)"]
    static let csrf = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

    static func put(_ kind: String, _ csv: String, _ client: any TestClientProtocol) async throws -> TestResponse {
        var headers = admin
        headers[.contentType] = "text/csv"
        return try await client.execute(
            uri: "/api/records/\(kind)", method: .put, headers: headers, body: ByteBuffer(string: csv))
    }

    static func export(_ kind: String, _ client: any TestClientProtocol) async throws -> String {
        let response = try await client.execute(uri: "/api/records/\(kind)", method: .get, headers: admin)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType]?.hasPrefix("text/csv") == true)
        return response.text
    }

    static func summary(_ response: TestResponse) throws -> ImportSummary {
        #expect(response.status == .ok, "\(response.text)")
        return try JSONDecoder().decode(ImportSummary.self, from: Data(response.text.utf8))
    }

    static func errors(_ response: TestResponse) throws -> [FieldError] {
        #expect(response.status == .unprocessableContent)
        struct Body: Decodable { var errors: [FieldError] }
        return try JSONDecoder().decode(Body.self, from: Data(response.text.utf8)).errors
    }

    static func csv(_ rows: [[String]]) -> String {
        rows.map { $0.map { $0.contains(",") ? "\"\($0)\"" : $0 }.joined(separator: ",") }.joined(separator: "\r\n")
            + "\r\n"
    }

    @Test(arguments: TestDatabase.engines)
    func twoThousandPeopleComeInOnceAndTheSameFileAgainChangesNothing(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            let people: [[String]] = (0..<2000).map { (n: Int) -> [String] in
                let language = n % 2 == 0 ? "fr" : "en"
                return ["stu\(n)", "Student \(n)", String(700_000 + n), "stu\(n)@uni.example", language]
            }
            let file = Self.csv([["username", "display_name", "student_id", "email", "mail_language"]] + people)
            #expect(try Self.summary(try await Self.put("people", file, client)) == ImportSummary(added: 2000))
            #expect(
                try Self.summary(try await Self.put("people", file, client)) == ImportSummary(unchanged: 2000))
            let ada = try #require(try await app.person("stu1999"))
            #expect(ada.displayName == "Student 1999" && ada.studentId == "701999" && ada.role == .member)
            let mail = try await app.features.accounts.addresses.entry(of: "stu1998")
            #expect(mail?.address == "stu1998@uni.example" && mail?.language == .french)

            // A change of name and student id is a change; the row for someone else's student id is refused.
            let changed = Self.csv([
                ["username", "display_name", "student_id"], ["stu1", "Student One", "799999"],
                ["stu2", "Student 2", "700003"],
            ])
            let refused = try Self.errors(try await Self.put("people", changed, client))
            #expect(
                refused == [FieldError(field: "student_id", message: "Another person has student id 700003.", row: 3)])
            #expect(try await app.person("stu1")?.displayName == "Student 1")
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aBooksFileWithBadRowsAppliesNothingAndNamesEachRow(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { app, client in
            var rows = [["title", "author", "categories", "isbn"]]
            rows += (0..<500).map { ["Book \($0)", "Author \($0 % 40)", "course, reading", ""] }
            var bad = rows
            bad[10][0] = ""
            bad[200][3] = "9780307887895"
            bad[450][1] = String(repeating: "x", count: 201)
            let errors = try Self.errors(try await Self.put("books", Self.csv(bad), client))
            #expect(errors.map { "\($0.row ?? 0) \($0.field)" } == ["11 title", "201 isbn", "451 author"])
            #expect(try await app.features.library.store.all().isEmpty)
            // A file wrong on every row says its first thousand errors, and how many more.
            let untitled = Self.csv([["title", "author"]] + (0..<1500).map { _ in ["", "Someone"] })
            let many = try Self.errors(try await Self.put("books", untitled, client))
            #expect(many.count == 1001 && many.last?.message == "And 500 more errors after these.")

            #expect(try Self.summary(try await Self.put("books", Self.csv(rows), client)) == ImportSummary(added: 500))
            #expect(
                try Self.summary(try await Self.put("books", Self.csv(rows), client)) == ImportSummary(unchanged: 500))
            let books = try await app.features.library.store.all()
            #expect(books.count == 500 && books[0].categories == ["course", "reading"])

            // A row with the id an export gives changes that book.
            let first = try #require(books.first)
            let edit = Self.csv([["id", "title", "author"], [String(first.id), "Book 0, revised", "Author 0"]])
            #expect(try Self.summary(try await Self.put("books", edit, client)) == ImportSummary(changed: 1))
            #expect(try await app.features.library.store.find(first.id)?.title == "Book 0, revised")
        }
    }

    /// What one Quad exports, another imports into the same records: its export is then the same bytes.
    @Test(arguments: TestDatabase.engines)
    func anExportImportsExactlyIntoAnotherQuad(engine: Database.Engine) async throws {
        let files = NIOLockedValueBox<[String: String]>([:])
        try await TestApp.run(engine, configure: { $0.loadDemoData = true }) { app, client in
            // A name a spreadsheet would run as a formula goes out after an apostrophe.
            let tricky = Self.csv([["title", "author"], ["=HYPERLINK(\"x\")", "@someone"]])
            #expect(try Self.summary(try await Self.put("books", tricky, client)).added == 1)
            for kind in ["rooms", "people", "books"] {
                let file = try await Self.export(kind, client)
                files.withLockedValue { $0[kind] = file }
                // The same Quad takes its own export back unchanged.
                let again = try Self.summary(try await Self.put(kind, file, client))
                #expect(again.added == 0 && again.changed == 0 && again.unchanged > 0, "\(kind)")
            }
            #expect(files.withLockedValue { $0["books"] ?? "" }.contains("'=HYPERLINK"))
        }
        try await TestApp.run(engine) { app, client in
            for kind in ["rooms", "people", "books"] {
                let file = files.withLockedValue { $0[kind] ?? "" }
                _ = try Self.summary(try await Self.put(kind, file, client))
                #expect(try await Self.export(kind, client) == file, "\(kind)")
            }
            #expect(try await app.features.library.store.all().contains { $0.title == "=HYPERLINK(\"x\")" })
        }
    }

    /// A room's row is held to the room's rules as `PATCH` is: seats below those booked ahead are refused with the
    /// row named, and nothing else in the file is applied.
    @Test(arguments: TestDatabase.engines)
    func roomsKeepTheirRulesAndAFileIsAllOrNothing(engine: Database.Engine) async throws {
        try await TestApp.run(engine, at: TestTime.weekdayMorning, configure: { $0.loadDemoData = true }) {
            app, client in
            let ada = try await app.signedIn("ada")
            let spots = try #require(try await app.features.rooms.store.find("mina")).seats
            let lower = Self.csv([
                ["id", "name", "building", "capacity", "spots"], ["new-room", "New room", "North Hall", "10", ""],
                ["mina", "Mina", "North Hall", String(spots), "0"],
            ])
            #expect(try await client.book("mina", as: ada).status == .created)
            let errors = try Self.errors(try await Self.put("rooms", lower, client))
            #expect(errors.count == 1 && errors[0].row == 3 && errors[0].field == "spots", "\(errors)")
            #expect(try await app.features.rooms.store.find("new-room") == nil)

            let unknownColumn = try Self.errors(
                try await Self.put("rooms", "id,name,building,capacity,floor\r\nx,X,Y,1,2\r\n", client))
            #expect(unknownColumn.map(\.field) == ["floor"] && unknownColumn[0].row == 1)
            let missing = try Self.errors(try await Self.put("rooms", "id,name\r\nx,X\r\n", client))
            #expect(Set(missing.map(\.field)) == ["building", "capacity"])
        }
    }

    /// Only admins move records in and out; the page's form (a file upload) carries the CSRF token like every form.
    @Test func onlyAdminsAndOnlyFromQuadsOwnForm() async throws {
        try await TestApp.run { app, client in
            let member = try await app.signedIn("kim")
            #expect(
                try await client.execute(uri: "/api/records/people", method: .get, headers: member).status == .forbidden
            )
            #expect(try await client.execute(uri: "/api/records/people", method: .get).status == .unauthorized)
            #expect(
                try await client.execute(uri: "/api/records/nothing", method: .get, headers: Self.admin).status
                    == .notFound)
            // Everyone's bookings are a calendar, never a CSV file: asked for as CSV alone, 406.
            let calendar = try await client.execute(uri: "/api/records/bookings", method: .get, headers: Self.admin)
            #expect(calendar.status == .ok && calendar.text.hasPrefix("BEGIN:VCALENDAR\r\n"))
            var csvOnly = Self.admin
            csvOnly[.accept] = "text/csv"
            let refused = try await client.execute(uri: "/api/records/bookings", method: .get, headers: csvOnly)
            #expect(refused.status == .notAcceptable)

            var browser = try await app.browser("boss", role: .admin, csrf: Self.csrf)
            let boundary = "quad-test-boundary"
            browser[.contentType] = "multipart/form-data; boundary=\(boundary)"
            func form(csrf: String) -> ByteBuffer {
                ByteBuffer(
                    string: [
                        "--\(boundary)", "Content-Disposition: form-data; name=\"csrf\"", "", csrf,
                        "--\(boundary)", "Content-Disposition: form-data; name=\"file\"; filename=\"books.csv\"",
                        "Content-Type: text/csv", "", "title,author", "Dune,Frank Herbert", "--\(boundary)--", "",
                    ].joined(separator: "\r\n"))
            }
            let forged = try await client.execute(
                uri: "/admin/records/books", method: .post, headers: browser, body: form(csrf: "not-the-token-at-all"))
            #expect(forged.status == .forbidden)
            #expect(try await app.features.library.store.all().isEmpty)
            let sent = try await client.execute(
                uri: "/admin/records/books", method: .post, headers: browser, body: form(csrf: Self.csrf))
            #expect(sent.status == .ok)
            #expect(sent.text.contains("Done: 1 added, 0 changed, 0 unchanged."))
            #expect(try await app.features.library.store.all().map(\.title) == ["Dune"])
        }
    }
}
