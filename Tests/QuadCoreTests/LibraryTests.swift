import Foundation
import Testing

@testable import QuadCore

@Suite struct LibraryTests {
    static func date(_ text: String) -> Date { LibraryDate.parse(text)! }

    // MARK: Dates

    @Test func outgoingDatesAreExactlyTheOriginalFormatInUTC() {
        #expect(LibraryDate.format(Date(timeIntervalSince1970: 1_412_190_971)) == "2014-10-01 19:16:11")
        #expect(LibraryDate.format(Date(timeIntervalSince1970: 0)) == "1970-01-01 00:00:00")
        // Fractions of a second are dropped, never rounded up into the next second.
        #expect(LibraryDate.format(Date(timeIntervalSince1970: 1_412_190_971.999)) == "2014-10-01 19:16:11")
    }

    @Test func incomingDatesAreReadInEveryFormTheOriginalClientsSent() {
        let expected = Date(timeIntervalSince1970: 1_412_190_971)  // 2014-10-01 19:16:11 UTC
        for text in [
            "2014-10-01 19:16:11", "2014-10-1 19:16:11", "2014-10-01 19:16:11 UTC", "2014-10-01 19:16:11 GMT",
            "2014-10-01 19:16:11 +0000", "2014-10-01T19:16:11Z", "2014-10-01 20:16:11 +01:00",
            "2014-10-01 21:16:11 +0200", "2014-10-01 15:16:11 -0400", "2014-10-1 19:16:11.250", " 2014-10-01 19:16:11 ",
        ] {
            #expect(LibraryDate.parse(text) == expected, "\(text)")
        }
        #expect(LibraryDate.parse("2014-1-2 3:4:5") == Date(timeIntervalSince1970: 1_388_631_845))
        #expect(LibraryDate.parse("2014-10-01") == Date(timeIntervalSince1970: 1_412_121_600))
        // A zone abbreviation is read too.
        #expect(LibraryDate.parse("2014-10-01 12:16:11 PDT") == expected)
    }

    @Test func thePageShowsDaysInTheCampusZoneAndLanguage() {
        let melbourne = TimeZone(identifier: "Australia/Melbourne")!
        let utc = TimeZone(identifier: "UTC")!
        // 2 May 2026 at 23:30 UTC is already 3 May in Melbourne (UTC+10).
        let late = Self.date("2026-05-02 23:30:00")
        let now = Self.date("2026-11-22 08:00:00")
        #expect(LibraryDate.day(late, language: .english, zone: melbourne, now: now) == "3 May")
        #expect(LibraryDate.day(late, language: .french, zone: melbourne, now: now) == "3 mai")
        #expect(LibraryDate.day(late, language: .english, zone: utc, now: now) == "2 May")
        // French says "1er" for the first; another year is named.
        let first = Self.date("2025-06-01 10:00:00")
        #expect(LibraryDate.day(first, language: .french, zone: melbourne, now: now) == "1er juin 2025")
        #expect(LibraryDate.day(first, language: .english, zone: melbourne, now: now) == "1 June 2025")
        // The year is the campus's: 31 December 2025 at 20:00 UTC is New Year's Day 2026 in Melbourne.
        #expect(
            LibraryDate.day(Self.date("2025-12-31 20:00:00"), language: .english, zone: melbourne, now: now)
                == "1 January")
    }

    @Test func nonsenseIsNotADate() {
        for text in [
            "", "yesterday", "2014-13-01 10:00:00", "2014-02-30 10:00:00", "2014-10-01 25:00:00",
            "2014-10-01 19:16:11 nowhere", "2014/10/01 19:16:11", "2014-10-01 19:16:11 +99", "01-10-2014 19:16:11",
        ] {
            #expect(LibraryDate.parse(text) == nil, "\(text)")
        }
    }

    // MARK: Validation

    @Test func titleAndAuthorAreRequiredAndNamed() {
        #expect(
            throws: ValidationFailure([
                FieldError(field: "title", message: "A book needs a title."),
                FieldError(field: "author", message: "A book needs an author."),
            ])
        ) {
            try BookValidation.book(title: "  ", author: nil, publisher: nil, categories: [], isbn: nil)
        }
        let long = String(repeating: "a", count: 201)
        #expect(throws: ValidationFailure.self) {
            try BookValidation.book(title: long, author: "A", publisher: nil, categories: [], isbn: nil)
        }
        let ok = try? BookValidation.book(
            title: String(repeating: "a", count: 200), author: " Ash   Maurya ", publisher: "", categories: [],
            isbn: nil)
        #expect(ok?.author == "Ash Maurya")
        #expect(ok?.publisher == nil)
    }

    @Test func categoriesAreTagsFromTheOriginalString() throws {
        #expect(BookValidation.categories("process, startups,, Lean ") == ["process", "startups", "Lean"])
        let fields = try BookValidation.book(
            title: "T", author: "A", publisher: nil, categories: ["process", "Process", " lean "], isbn: nil)
        #expect(fields.categories == ["process", "lean"])
    }

    @Test func isbnChecksumsAreVerifiedAndNormalised() {
        #expect(ISBN.normalise("0-306-40615-2") == "0306406152")
        #expect(ISBN.normalise("978-0-306-40615-7") == "9780306406157")
        #expect(ISBN.normalise("ISBN 978 0 306 40615 7") == "9780306406157")
        #expect(ISBN.normalise("080442957x") == "080442957X")
        #expect(ISBN.normalise("0-306-40615-3") == nil)  // wrong check digit
        #expect(ISBN.normalise("978-0-306-40615-8") == nil)
        #expect(ISBN.normalise("12345") == nil)
        #expect(ISBN.normalise("X306406152") == nil)  // X only as the last character
        #expect(throws: ValidationFailure.self) {
            try BookValidation.book(title: "T", author: "A", publisher: nil, categories: [], isbn: "0-306-40615-3")
        }
        let fields = try? BookValidation.book(
            title: "T", author: "A", publisher: nil, categories: [], isbn: "978-1-59327-584-6")
        #expect(fields?.isbn == "9781593275846")
    }

    // MARK: Status

    @Test func statusFollowsTheLoanAndItsDueDate() {
        let out = Self.date("2026-05-03 10:00:00")
        let policy = LoanPolicy()
        #expect(policy.days == 14)
        let due = policy.dueAt(checkedOutAt: out)
        #expect(LibraryDate.format(due) == "2026-05-17 10:00:00")
        var book = Book(id: 1, title: "T", author: "A", addedAt: out)
        #expect(book.status(at: out) == .available)
        book.loan = Loan(person: "Ada", checkedOutAt: out, dueAt: due)
        #expect(book.status(at: Self.date("2026-05-17 10:00:00")) == .onLoan)
        #expect(book.status(at: Self.date("2026-05-17 10:00:01")) == .overdue)
        #expect(LoanPolicy(days: 7).dueAt(checkedOutAt: out) == Self.date("2026-05-10 10:00:00"))
    }

    // MARK: Wire record

    @Test func theRecordHasTheOriginalShape() throws {
        let out = Self.date("2014-10-1 19:16:11")
        let book = Book(
            id: 1, title: "Running Lean", author: "Ash Maurya", publisher: "O'REILLY", categories: ["process"],
            addedAt: Self.date("2014-09-01 08:00:00"),
            loan: Loan(person: "Prolific Pablo", checkedOutAt: out, dueAt: LoanPolicy().dueAt(checkedOutAt: out)))
        let data = try BookRecord.encoder.encode(BookRecord(book, now: out))
        let json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["author"] as? String == "Ash Maurya")
        #expect(json["categories"] as? String == "process")
        #expect(json["id"] as? Int == 1)
        #expect(json["lastCheckedOut"] as? String == "2014-10-01 19:16:11")
        #expect(json["lastCheckedOutBy"] as? String == "Prolific Pablo")
        #expect(json["publisher"] as? String == "O'REILLY")
        #expect(json["url"] as? String == "/books/1")
        #expect(json["status"] as? String == "on-loan")
        #expect(json["dueAt"] as? String == "2014-10-15 19:16:11")

        let shelf = Book(id: 2, title: "The Lean Startup", author: "Eric Ries", addedAt: out)
        let text = String(decoding: try BookRecord.encoder.encode(BookRecord(shelf, now: out)), as: UTF8.self)
        #expect(text.contains("\"lastCheckedOut\":null"))
        #expect(text.contains("\"lastCheckedOutBy\":null"))
        #expect(text.contains("\"publisher\":\"\""))
        #expect(text.contains("\"categories\":\"\""))
    }

    @Test func aReturnedBookKeepsItsLastCheckoutDateButNotItsBorrower() throws {
        let out = Self.date("2014-10-01 19:16:11")
        let book = Book(
            id: 3, title: "T", author: "A", addedAt: out, loan: nil, lastCheckedOut: out, lastCheckedOutBy: "Ada")
        let record = BookRecord(book, now: out)
        #expect(record.lastCheckedOut == "2014-10-01 19:16:11")
        #expect(record.lastCheckedOutBy == nil)
        #expect(record.status == .available)
    }

    // MARK: Input

    @Test func partialInputTellsAbsentFromNull() throws {
        let input = try BookInput(json: Data(#"{"lastCheckedOutBy": null, "title": "New"}"#.utf8))
        #expect(input.lastCheckedOutBy == .null)
        #expect(input.title == .value("New"))
        #expect(input.author == .absent)
        let book = Book(
            id: 1, title: "Old", author: "Ash", publisher: "P", categories: ["x"],
            addedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let fields = try input.applied(to: book)
        #expect(fields.title == "New")
        #expect(fields.author == "Ash")
        #expect(fields.publisher == "P")
        #expect(fields.categories == ["x"])
    }

    @Test func inputReadsBothDateFormsAndNamesBadFields() throws {
        let padded = try BookInput(json: Data(#"{"lastCheckedOut": "2014-10-01 19:16:11"}"#.utf8))
        let unpadded = try BookInput(json: Data(#"{"lastCheckedOut": "2014-10-1 19:16:11 UTC"}"#.utf8))
        #expect(padded.lastCheckedOut == unpadded.lastCheckedOut)
        #expect(padded.lastCheckedOut.value != nil)
        #expect(
            throws: ValidationFailure([
                FieldError(field: "title", message: "title must be a string or null."),
                FieldError(field: "lastCheckedOut", message: "A date is written yyyy-MM-dd HH:mm:ss (UTC)."),
            ])
        ) {
            try BookInput(json: Data(#"{"title": 4, "lastCheckedOut": "someday"}"#.utf8))
        }
        let array = try BookInput(json: Data(#"{"categories": ["a", "b"]}"#.utf8))
        #expect(array.categories == .value(["a", "b"]))
        let string = try BookInput(json: Data(#"{"categories": "a, b"}"#.utf8))
        #expect(string.categories == .value(["a", "b"]))
    }

    @Test func listingSearchesFiltersAndSorts() {
        let day = Self.date("2026-01-01 00:00:00")
        let books = [
            Book(id: 1, title: "Running Lean", author: "Ash Maurya", categories: ["process"], addedAt: day),
            Book(
                id: 2, title: "Les Misérables", author: "Victor Hugo", categories: ["novel"],
                addedAt: day.addingTimeInterval(60),
                loan: Loan(person: "Ada", checkedOutAt: day, dueAt: day.addingTimeInterval(3600))),
            Book(id: 3, title: "The Lean Startup", author: "Eric Ries", categories: ["startups"], addedAt: day),
        ]
        let now = day.addingTimeInterval(7200)
        #expect(Book.listed(books, now: now).map(\.id) == [2, 3, 1])
        #expect(Book.listed(books, sort: .oldest, now: now).map(\.id) == [1, 3, 2])
        #expect(Book.listed(books, query: "lean", sort: .oldest, now: now).map(\.id) == [1, 3])
        #expect(Book.listed(books, query: "miserables hugo", now: now).map(\.id) == [2])
        #expect(Book.listed(books, query: "STARTUPS", now: now).map(\.id) == [3])
        #expect(Book.listed(books, status: .overdue, now: now).map(\.id) == [2])
        #expect(Book.listed(books, status: .available, now: now).map(\.id) == [3, 1])
    }
}
