import Foundation
import Hummingbird
import OpenAPIHummingbird
import QuadCore
import QuadPlatform
import QuadWaitingLines
import SQLKit
import ServiceLifecycle

/// The Library service: who has which book. The API (`LibraryOperations`) and the web app (`LibraryRoutes`)
/// both change books through it, so every change is checked the same way and publishes a `book` event.
package final class Library: Feature, WaitingThings, PersonLoans, PersonRemoval {
    let store: LibraryStore
    let platform: Platform
    /// The waiting lines for books (holds).
    let lines: WaitingLists
    /// The campus's time zone (the Timetable's), for the dates the web app shows.
    let campus: any CampusTime
    /// Loans' reminders by mail (`LoanReminders`).
    let mail: PersonMail
    /// `GET /api/books` as every open app polls it (no search, filter or sort): encoded once per change, for people
    /// signed in (with names) and for visitors (without), and again when a loan falls due.
    let shelf: KeptAnswer
    /// Every book as loaded, for the shelf, the page and the filtered lists: read once per change.
    let books: Kept<One, [Book]>

    /// Whose shelf a caller reads: names are for people signed in (`LoanPermission.seesBorrowers`).
    enum Audience: String, Sendable {
        case named, visitors

        init(_ person: Person?) { self = LoanPermission.seesBorrowers(person) ? .named : .visitors }
    }

    package init(platform: Platform, campus: any CampusTime, lines: WaitingLists, mail: PersonMail = .off) {
        self.platform = platform
        self.lines = lines
        self.campus = campus
        self.mail = mail
        let store = LibraryStore(
            database: platform.database, waiting: lines, mail: mail,
            policy: LoanPolicy(days: platform.configuration.loanDays))
        self.store = store
        let books = Kept<One, [Book]>(hub: platform.events, clock: platform.clock, droppedBy: [.event(.book)]) {
            try await store.all()
        }
        self.books = books
        self.shelf = KeptAnswer(
            operation: Operations.ListBooks.id, path: "/api/books", platform: platform, droppedBy: [.event(.book)],
            key: { _, person in Audience(person).rawValue }
        ) { [clock = platform.clock] audience in
            let books = try await books.value()
            let now = clock.now
            let named = audience == Audience.named.rawValue
            let records = Book.listed(books, now: now).map { Library.record($0, now: now, named: named) }
            // A status changes by itself when a loan falls due: the bytes last until the first that does.
            let due = books.compactMap(\.loan?.dueAt).filter { $0 > now }.min()
            return try EncodedAnswer.json(records, expires: due)
        }
        lines.register(.book, self)
    }

    /// Every book, as the store holds them (kept between changes).
    func allBooks() async throws -> [Book] { try await books.value() }

    typealias Change = BookEvent

    func changed(_ book: Book?, id: Int? = nil, _ kind: Change.Kind) async {
        // No name: anyone may listen to the event stream; who has the book is for people signed in.
        await platform.events.publish(
            Change(id: book?.id ?? id, change: kind, status: book?.status(at: platform.clock.now)))
    }

    /// A person removed: their loans go back on the shelf (or to the next in line) and their places in books' lines
    /// are left, in the removal's transaction; each return is announced as any return is.
    package func release(_ usernameKey: String, in sql: any SQLDatabase) async throws -> @Sendable () async -> Void {
        let (returned, waiting) = try await store.release(usernameKey, now: platform.clock.now, sql)
        return { [self] in
            for id in returned { await changed(try? await store.find(id), id: id, .returned) }
            await lines.announce(waiting)
        }
    }

    func find(_ id: Int) async throws -> Book {
        guard let book = try await store.find(id) else { throw LoanRefusal.notFound(id) }
        return book
    }

    /// The time zone the web app shows dates in: the campus's, as set for the Timetable (`/admin/timetable`),
    /// else the server's own. The API's dates stay UTC, as the original sent them.
    func timeZone() async -> TimeZone { await campus.timeZone() }

    /// The campus's wall clock, for loans' stages.
    func campusClock() async -> CampusClock { CampusClock(timeZone: await campus.timeZone()) }

    // MARK: Wire

    /// The book's record, with its ETag; with its loans for the answer about one book. Names (who has it, who
    /// had it) are for people signed in: `named: false` leaves them out, the status and due date stay.
    static func record(_ book: Book, loans: [Loan]? = nil, now: Date, named: Bool = true) -> BookRecord {
        var record = BookRecord(book, now: now, loans: loans)
        if !named { record = record.withoutNames }
        record.etag = etag(book, now: now, named: named)
        return record
    }

    static func encode(_ book: Book, loans: [Loan]? = nil, now: Date, named: Bool = true) -> Data {
        (try? BookRecord.encoder.encode(record(book, loans: loans, now: now, named: named))) ?? Data()
    }

    /// The book's ETag as of `now`: the hash of its record, status included, so a client revalidating sees the
    /// book fall due (loans aside: every loan change shows in the record too).
    static func etag(_ book: Book, now: Date, named: Bool = true) -> String {
        let record = BookRecord(book, now: now)
        return HTTPCache.etag(for: (try? BookRecord.encoder.encode(named ? record : record.withoutNames)) ?? Data())
    }

    /// 412 unless `ifMatch` (an `If-Match` header) names the book's current ETag or is `*`. The book as shown
    /// before it fell due also matches: a due date passing is nobody's edit.
    static func check(ifMatch: String?, _ book: Book, now: Date) throws {
        guard let ifMatch else { return }
        let current = [etag(book, now: now), etag(book, now: .distantPast)]
        guard current.contains(where: { HTTPCache.matches(ifNoneMatch: ifMatch, etag: $0) }) else {
            throw Problem(
                .preconditionFailed, type: "stale-book", title: "Changed meanwhile",
                detail: "Someone changed this book since you loaded it. Load it again and redo your change.")
        }
    }

    // MARK: Changes

    /// Adds a book. A `lastCheckedOutBy` checks it out at once, from `lastCheckedOut` when sent (importing a
    /// loan from the original server), else from now.
    func create(_ input: BookInput, by person: Person) async throws -> Book {
        let now = platform.clock.now
        var errors: [FieldError] = []
        var fields: BookValidation.Fields?
        do { fields = try input.newBook() } catch { errors += error.errors }
        var loan = LoanAction.none
        if let name = input.lastCheckedOutBy.value {
            do {
                let borrower = try BookValidation.borrower(name)
                try Self.mayLend(to: borrower, by: person)
                loan = .checkOut(
                    person: borrower, username: LoanPermission.owner(of: borrower, lentBy: person),
                    at: input.lastCheckedOut.value ?? now)
            } catch let failure as ValidationFailure { errors += failure.errors }
        }
        guard let fields, errors.isEmpty else { throw ValidationFailure(errors) }
        let book = try await store.create(fields, loan: loan, now: now)
        await changed(book, .created)
        return book
    }

    /// Applies a partial change: fields left out keep their value. `lastCheckedOutBy` with a name checks
    /// the book out to that name now (as the original did); `null` returns it.
    func update(_ id: Int, _ input: BookInput, ifMatch: String?, by person: Person) async throws -> Book {
        let now = platform.clock.now
        var loan = LoanAction.none
        switch input.lastCheckedOutBy {
        case .absent: break
        case .null: loan = .giveBack(at: now)
        case .value(let name):
            let borrower = try BookValidation.borrower(name)
            try Self.mayLend(to: borrower, by: person)
            let owner = LoanPermission.owner(of: borrower, lentBy: person)
            // Only an admin may hand a book on from someone else; a member gets it when it is free.
            loan =
                person.isAdmin
                ? .checkOut(person: borrower, username: owner, at: now)
                : .checkOutIfAvailable(person: borrower, username: owner, at: now)
        }
        let action = loan
        let editsFields =
            !(input.title.isAbsent && input.author.isAbsent && input.publisher.isAbsent
            && input.categories.isAbsent && input.isbn.isAbsent)
        let (book, waiting) = try await store.update(id, now: now) { current in
            try Self.check(ifMatch: ifMatch, current, now: now)
            switch action {
            case .checkOut(let borrower, _, _), .checkOutIfAvailable(let borrower, _, _):
                // Naming the person who has it already changes nothing.
                if current.loan?.person == borrower {
                    return (editsFields ? try input.applied(to: current) : nil, .none)
                }
            case .giveBack:
                if let running = current.loan { try Self.mayReturn(running, by: person) }
            case .none: break
            }
            return (editsFields ? try input.applied(to: current) : nil, action)
        }
        let kind: Change.Kind =
            switch loan {
            case .none: .updated
            case .giveBack: .returned
            case .checkOut, .checkOutIfAvailable: .checkedOut
            }
        await changed(book, kind)
        await lines.announce(waiting)
        return book
    }

    /// Checks the book out to the signed-in person, or to a name an admin gives; 409 naming who has it, or saying it
    /// is held for someone in line. `accepting`: the place in line whose offer this takes.
    func checkOut(_ id: Int, by person: Person, name: String?, accepting: String? = nil) async throws -> Book {
        let now = platform.clock.now
        var borrower = person.displayName
        if let name, !name.trimmingCharacters(in: .whitespaces).isEmpty {
            borrower = try BookValidation.borrower(name, field: "name")
            try Self.mayLend(to: borrower, by: person)
        }
        let action = LoanAction.checkOutIfAvailable(
            person: borrower, username: LoanPermission.owner(of: borrower, lentBy: person), at: now)
        let (book, waiting) = try await store.update(id, now: now, accepting: accepting) { _ in (nil, action) }
        await changed(book, .checkedOut)
        await lines.announce(waiting)
        return book
    }

    /// Puts the book back on the shelf; 409 when it is there already, 403 when the loan is someone else's.
    func giveBack(_ id: Int, by person: Person) async throws -> Book {
        let now = platform.clock.now
        let (book, waiting) = try await store.update(id, now: now) { current in
            guard let loan = current.loan else { throw LoanRefusal.notOnLoan }
            try Self.mayReturn(loan, by: person)
            return (nil, .giveBack(at: now))
        }
        await changed(book, .returned)
        await lines.announce(waiting)
        return book
    }

    // MARK: Its waiting lines

    /// Puts `person` in line for the book; their place and where they stand.
    func hold(_ id: Int, by person: Person) async throws -> (place: WaitingPlace, position: Int) {
        let (place, position, changes) = try await store.hold(
            id, owner: person.username.lowercased(), name: person.displayName, now: platform.clock.now)
        await lines.announce(changes)
        return (place, position)
    }

    package func accept(_ place: WaitingPlace, by person: Person) async throws -> AcceptedOffer {
        guard let id = Int(place.thing) else { throw LoanRefusal.offerEnded }
        let book = try await checkOut(id, by: person, name: nil, accepting: place.id)
        return AcceptedOffer(kind: .book, thing: place.thing, path: LibraryRoutes.checkedOutPath(book))
    }

    package func remove(_ place: WaitingPlace, _ change: WaitingEvent.Change) async throws {
        var changes = try await store.removeWaiting(place, now: platform.clock.now)
        changes.changed.append((place, change))
        await lines.announce(changes)
    }

    package func settle(thing: String) async throws {
        guard let id = Int(thing) else { return }
        await lines.announce(try await store.settle(id, now: platform.clock.now))
    }

    package func loans(of username: String) async throws -> [PersonLoan] { try await store.loans(of: username) }

    /// Deletes the book if the person asking may (`LoanPermission.deleteRefusal`).
    func delete(_ id: Int, ifMatch: String? = nil) async throws {
        var check: (@Sendable (Book) throws -> Void)?
        let now = platform.clock.now
        if let ifMatch { check = { book in try Self.check(ifMatch: ifMatch, book, now: now) } }
        guard try await store.delete(id, by: try Access.person(), now: now, check: check) else {
            throw LoanRefusal.notFound(id)
        }
        await changed(nil, id: id, .deleted)
    }

    /// Deletes all the books named or none (404 listing the unknown ones).
    func delete(_ ids: [Int]) async throws -> [Int] {
        guard ids.count <= BookValidation.maxDeletedAtOnce else {
            throw ValidationFailure(
                field: "ids", message: "Delete at most \(BookValidation.maxDeletedAtOnce) books at once.")
        }
        let deleted = try await store.delete(ids, by: try Access.person(), now: platform.clock.now)
        for id in deleted { await changed(nil, id: id, .deleted) }
        return deleted
    }

    func clean() async throws -> Int {
        let count = try await store.clean()
        await changed(nil, .cleaned)
        return count
    }

    // MARK: The loan policy (`LoanPermission`), as answers

    static func mayLend(to borrower: String, by person: Person) throws {
        guard LoanPermission.mayLend(to: borrower, by: person) else {
            throw Problem(.forbidden, detail: "Only an admin may check a book out to someone else.")
        }
    }

    static func mayReturn(_ loan: Loan, by person: Person) throws {
        guard LoanPermission.mayReturn(loan, by: person) else {
            throw Problem(.forbidden, detail: "Only an admin may return a book someone else has.")
        }
    }
}

extension Library {
    package static var migrations: [Migration] { LibraryStore.migrations }

    /// Loans' reminders, every minute.
    package var services: [any Service] {
        [MarkKeeper(every: 60, clock: platform.clock) { [self] in await remindDueLoans() }]
    }
    package static let files = WebFiles(module: "QuadLibrary", bundle: .module)
    package static var letters: [LetterWriter] { [LibraryStore.loanLetter.writer] }

    package var adminLinks: [AdminLink] { [AdminLink(title: "library.add", path: "/library/new")] }
    package var recordSets: [any RecordSet] { [BookRecords(library: self)] }

    package var link: ServiceLink? {
        // The tab bar shows a book.
        ServiceLink(
            key: "library", path: "/library",
            icon: "M5 19.5V5a2 2 0 0 1 2-2h12v14H7a2 2 0 0 0-2 2.5 2 2 0 0 0 2 2.5h12v-5")
    }

    package func register(on routes: Routes, web: WebShell) throws {
        LibraryRoutes(library: self, web: web).register(on: routes)
        try LibraryOperations(library: self).registerHandlers(
            on: routes.router, configuration: .quad, middlewares: .quad(kept: keptAnswers))
    }

    /// `GET /api/books`, polled by every open app.
    package var keptAnswers: [any AnyKeptAnswer] { [shelf] }

    package func loadDemoData(announce: @escaping @Sendable (String) -> Void) async throws {
        try await LibraryDemo.load(self)
    }
}
