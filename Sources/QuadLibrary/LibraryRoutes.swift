import Foundation
import Hummingbird
import QuadCore
import QuadPlatform

/// The `/library` web app: the list and a book's detail (side by side on wide screens), the editor, and
/// forms for every change, so it all works without JavaScript; `library.js` adds sharing, the
/// unsaved-changes guard and live updates.
struct LibraryRoutes {
    let library: Library
    let web: WebShell
    static let sortCookie = "quad_library_sort"

    func register(on routes: Routes) {
        routes.on(.get, "/library", .public) { request, _ in try await self.page(request, detail: nil) }
        routes.on(.get, "/library/new", .member) { request, _ in try await self.newBook(request) }
        routes.on(.get, "/library/books/:bookId", .public) { request, context in
            try await self.page(request, detail: try Self.id(context))
        }
        routes.on(.get, "/library/books/:bookId/edit", .member) { request, context in
            try await self.edit(request, id: try Self.id(context))
        }
        routes.on(.post, "/library/books", .member) { request, _ in try await self.create(request) }
        routes.on(.post, "/library/books/:bookId", .member) { request, context in
            try await self.update(request, id: try Self.id(context))
        }
        routes.on(.post, "/library/books/:bookId/checkout", .member) { request, context in
            try await self.checkOut(request, id: try Self.id(context))
        }
        routes.on(.post, "/library/books/:bookId/hold", .member) { request, context in
            try await self.hold(request, id: try Self.id(context))
        }
        routes.on(.post, "/library/books/:bookId/return", .owner) { request, context in
            try await self.giveBack(request, id: try Self.id(context))
        }
        routes.on(.post, "/library/books/:bookId/delete", .member) { request, context in
            try await self.delete(request, id: try Self.id(context))
        }
        routes.on(.post, "/library/delete", .member) { request, _ in try await self.deleteSelected(request) }
    }

    /// The book of the path: a whole number from 1; anything else names no book (404).
    static func id(_ context: AppRequestContext) throws -> Int {
        let raw = try context.parameters.require("bookId")
        guard let id = Int(raw), id > 0 else { throw Problem.notFound("There is no book \(raw).") }
        return id
    }

    /// The editor's state: what was typed, and the errors next to their fields.
    struct Editor {
        var bookId: Int?
        var form: [String: String] = [:]
        var errors: [String: String] = [:]
        var etag: String?
        var message: String?
    }

    struct Notice {
        var kind: String
        var text: String
    }

    // MARK: Pages

    func page(
        _ request: Request, detail: Int?, editor: Editor? = nil, notice: Notice? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let query = request.uri.queryParameters
        let person = RequestInfo.current.person
        let (sort, remember) = try await sortOrder(request, person: person)
        let now = library.platform.clock.now
        let zone = await library.timeZone()
        let all = try await library.allBooks()
        let search = request.queryForm["q"]?.trimmingCharacters(in: .whitespaces) ?? ""
        let books = Book.listed(all, query: search, sort: sort, now: now)
        let selectMode = query.get("select") != nil && person != nil
        let selectAll = query.get("select") == "all"
        var shown: Book?
        var loans: [Loan] = []
        if let detail {
            shown = try await library.find(detail)
            loans = try await library.store.loans(detail)
        }
        let listQuery = Self.listQuery(q: search, sort: query.get("sort"))
        let title: (Localizer) -> String = { t in
            if let editor { return editor.bookId == nil ? t("library.newTitle") : t("library.edit") }
            return shown?.title ?? t("library.title")
        }
        // Kept (`PageCache`) until a book or a loan changes, someone chooses another order, or the campus another time
        // zone; or until a loan falls due, or the next day (a date in another year is written with its year).
        let changesAt =
            ([CampusClock(timeZone: zone).nextDay(after: now)] + all.compactMap { $0.statusChanges(after: now) })
            .min()
        var response = try web.page(
            request, template: "library", status: status, title: title, strings: Self.scriptStrings,
            fragments: ["live": "library-live"],
            keptUntilChangeOf: [.event(.book), .notice(Self.sortNotice)] + library.campus.changes,
            keptUntil: { _ in changesAt }
        ) { t in
            return LibraryPage(
                books: books.map { book in
                    let badge = Self.badge(
                        book, now: now, zone: zone, named: LoanPermission.seesBorrowers(person), t: t)
                    return .init(
                        id: book.id, title: book.title, author: book.author, status: badge.status,
                        statusText: badge.statusText, current: book.id == detail, checked: selectAll,
                        pickLabel: t("library.pick", ["title": book.title]))
                },
                hasBooks: !all.isEmpty, noMatch: !all.isEmpty && books.isEmpty,
                countText: t("library.count", count: books.count), q: search,
                sorts: BookSort.allCases.map { option in
                    .init(
                        value: option.rawValue, selected: option == sort,
                        label: t(option == .newest ? "library.sortNewest" : "library.sortOldest"))
                },
                selectMode: selectMode,
                selectHref: "/library?select=1" + listQuery.replacingOccurrences(of: "?", with: "&"),
                selectAllHref: "/library?select=all" + listQuery.replacingOccurrences(of: "?", with: "&"),
                doneHref: "/library" + listQuery, listHref: "/library" + listQuery,
                hasDetail: shown != nil || editor != nil,
                generatedAt: Int(now.timeIntervalSince1970 * 1000),
                refreshSeconds: library.platform.configuration.refreshSeconds,
                detail: editor == nil
                    ? shown.map { Self.detail($0, loans: loans, person: person, now: now, zone: zone, t: t) } : nil,
                editor: editor.map { Self.editor($0, t: t) },
                notice: notice ?? Self.notice(query: query, title: shown?.title ?? "", t: t))
        }
        if let remember { response.setCookie(remember) }
        return response
    }

    /// The notice that someone chose another list order (`?sort=`): a kept `/library` page without one shows the order
    /// they chose last.
    static let sortNotice = "library-sort"

    /// The list order: `?sort=` (remembered for the person, or in a cookie for a visitor), else what they chose last.
    private func sortOrder(_ request: Request, person: Person?) async throws -> (BookSort, Cookie?) {
        if let chosen = request.uri.queryParameters.get("sort").flatMap({ BookSort(rawValue: $0) }) {
            if let person {
                // Written only when it changes: the list reloads with the same `?sort=` on every live event.
                if try await library.store.sort(for: person.username) != chosen {
                    try await library.store.setSort(chosen, for: person.username)
                    await library.platform.events.notice(Self.sortNotice, "")
                }
                return (chosen, nil)
            }
            return (
                chosen,
                Cookie(
                    name: Self.sortCookie, value: chosen.rawValue, maxAge: 365 * 24 * 3600, path: "/library",
                    sameSite: .lax)
            )
        }
        if let person, let saved = try await library.store.sort(for: person.username) { return (saved, nil) }
        if let cookie = request.cookies[Self.sortCookie].flatMap({ BookSort(rawValue: $0.value) }) {
            return (cookie, nil)
        }
        return (.newest, nil)
    }

    static func listQuery(q: String, sort: String?) -> String {
        var items: [String] = []
        if !q.isEmpty { items.append("q=" + (q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")) }
        if let sort, BookSort(rawValue: sort) != nil { items.append("sort=" + sort) }
        return items.isEmpty ? "" : "?" + items.joined(separator: "&")
    }

    /// "3 May" / "3 mai", in the campus's time zone, with the year when it is not this year's.
    static func day(_ date: Date, _ language: Language, zone: TimeZone, now: Date) -> String {
        LibraryDate.day(date, language: language, zone: zone, now: now)
    }

    /// The book's status; who has it only for people signed in (`named`).
    static func badge(
        _ book: Book, now: Date, zone: TimeZone, named: Bool, t: Localizer
    ) -> (
        status: String, statusText: String
    ) {
        let status = book.status(at: now)
        let since = book.loan.map { day($0.checkedOutAt, t.language, zone: zone, now: now) } ?? ""
        let text: String =
            switch status {
            case .available: t("library.status.available")
            case .overdue: t("library.status.overdue")
            case .onLoan:
                named
                    ? t("library.status.withSince", ["name": book.loan?.person ?? "", "date": since])
                    : t("library.status.onLoanSince", ["date": since])
            }
        return (status.rawValue, text)
    }

    static func detail(
        _ book: Book, loans: [Loan], person: Person?, now: Date, zone: TimeZone, t: Localizer
    ) -> LibraryPage.Detail {
        let named = LoanPermission.seesBorrowers(person)
        let badge = badge(book, now: now, zone: zone, named: named, t: t)
        var fields: [LibraryPage.Detail.Field] = []
        func field(_ key: String, _ value: String?) {
            if let value, !value.isEmpty { fields.append(.init(label: t("library.field.\(key)"), value: value)) }
        }
        field("publisher", book.publisher)
        field("categories", book.categories.joined(separator: ", "))
        field("isbn", book.isbn)
        field("added", day(book.addedAt, t.language, zone: zone, now: now))
        if named { field("borrower", book.loan?.person) }
        field("due", book.loan.map { day($0.dueAt, t.language, zone: zone, now: now) })
        field("lastCheckedOut", book.lastCheckedOut.map { day($0, t.language, zone: zone, now: now) })
        let history = (named ? loans : []).map { loan -> String in
            let from = day(loan.checkedOutAt, t.language, zone: zone, now: now)
            if let returned = loan.returnedAt {
                return t(
                    "library.loanReturned",
                    ["name": loan.person, "from": from, "to": day(returned, t.language, zone: zone, now: now)])
            }
            return t(
                "library.loanOpen",
                ["name": loan.person, "from": from, "due": day(loan.dueAt, t.language, zone: zone, now: now)])
        }
        return LibraryPage.Detail(
            id: book.id, title: book.title, author: book.author, status: badge.status, statusText: badge.statusText,
            fields: fields, loans: history, hasLoans: named && !loans.isEmpty,
            canCheckOut: person != nil && book.loan == nil, canName: person?.isAdmin == true,
            canReturn: person.map { person in book.loan.map { LoanPermission.mayReturn($0, by: person) } ?? false }
                ?? false,
            canHold: person.map { person in
                book.loan.map { $0.username != person.username.lowercased() } ?? false
            } ?? false,
            canEdit: person != nil, deleteConfirm: t("library.deleteConfirm", ["title": book.title]))
    }

    static func editor(_ editor: Editor, t: Localizer) -> LibraryPage.Editor {
        let specs: [(name: String, required: Bool, hint: String?, autocomplete: String)] = [
            ("title", true, nil, "off"), ("author", true, nil, "off"), ("publisher", false, nil, "off"),
            ("categories", false, "library.field.categoriesHint", "off"),
            ("isbn", false, "library.field.isbnHint", "off"),
        ]
        return LibraryPage.Editor(
            action: editor.bookId.map { "/library/books/\($0)" } ?? "/library/books",
            heading: editor.bookId == nil
                ? t("library.newTitle") : t("library.editTitle", ["title": editor.form["originalTitle"] ?? ""]),
            cancelHref: editor.bookId.map { "/library/books/\($0)" } ?? "/library",
            fields: specs.map { spec in
                .init(
                    name: spec.name, label: t("library.field.\(spec.name)"), value: editor.form[spec.name] ?? "",
                    required: spec.required, autocomplete: spec.autocomplete, hint: spec.hint.map { t($0) },
                    error: editor.errors[spec.name])
            },
            etag: editor.etag,
            message: editor.message ?? (editor.errors.isEmpty ? nil : t("library.errors.summary")))
    }

    /// What the last form did, after its redirect (`?done=`).
    private static func notice(query: Parameters, title: String, t: Localizer) -> Notice? {
        let text: String? =
            switch query.get("done") {
            case "added": t("library.notice.added", ["title": title])
            case "saved": t("library.notice.saved")
            case "checkedOut": t("library.notice.checkedOut", ["name": query.get("name") ?? ""])
            case "returned": t("library.notice.returned")
            case "inLine": t("library.notice.inLine", ordinal: max(1, Int(query.get("position") ?? "") ?? 1))
            case "deleted": t("library.notice.deleted", count: Int(query.get("count") ?? "") ?? 1)
            default: nil
            }
        return text.map { Notice(kind: "success", text: $0) }
    }

    /// The strings `library.js` needs, in the page's language.
    static let scriptStrings = ScriptStrings([
        "library.copied", "library.copyPrompt", "library.live",
    ])

    // MARK: Editor

    func newBook(_ request: Request) async throws -> Response {
        return try await page(request, detail: nil, editor: Editor())
    }

    func edit(_ request: Request, id: Int) async throws -> Response {
        let book = try await library.find(id)
        return try await page(request, detail: id, editor: Self.editor(for: book, now: library.platform.clock.now))
    }

    static func editor(for book: Book, now: Date) -> Editor {
        Editor(
            bookId: book.id,
            form: [
                "title": book.title, "author": book.author, "publisher": book.publisher ?? "",
                "categories": book.categories.joined(separator: ", "), "isbn": book.isbn ?? "",
                "originalTitle": book.title,
            ], etag: Library.etag(book, now: now))
    }

    /// Validation errors in the page's language, by field.
    static func localized(_ failure: ValidationFailure, form: [String: String], t: Localizer) -> [String: String] {
        var errors: [String: String] = [:]
        for error in failure.errors where errors[error.field] == nil {
            let typed = (form[error.field] ?? "").trimmingCharacters(in: .whitespaces)
            errors[error.field] =
                switch error.field {
                case "title": typed.isEmpty ? t("library.errors.titleRequired") : t("library.errors.tooLong")
                case "author": typed.isEmpty ? t("library.errors.authorRequired") : t("library.errors.tooLong")
                case "isbn": t("library.errors.isbn")
                case "categories": t("library.errors.categories")
                case "name", "lastCheckedOutBy": t("library.errors.name")
                default: t("library.errors.tooLong")
                }
        }
        return errors
    }

    static func input(_ form: [String: String]) -> BookInput {
        var input = BookInput()
        input.title = .value(form["title"] ?? "")
        input.author = .value(form["author"] ?? "")
        input.publisher = .value(form["publisher"] ?? "")
        input.categories = .value(BookValidation.categories(form["categories"] ?? ""))
        input.isbn = .value(form["isbn"] ?? "")
        return input
    }

    func create(_ request: Request) async throws -> Response {
        var request = request
        let form = try await request.formFields()
        let t = Localizer(language: web.language(for: request))
        do {
            let book = try await library.create(Self.input(form), by: try Access.person())
            return .seeOther("/library/books/\(book.id)?done=added")
        } catch let failure as ValidationFailure {
            let editor = Editor(form: form, errors: Self.localized(failure, form: form, t: t))
            return try await page(request, detail: nil, editor: editor, status: .unprocessableContent)
        }
    }

    func update(_ request: Request, id: Int) async throws -> Response {
        var request = request
        let form = try await request.formFields()
        let t = Localizer(language: web.language(for: request))
        let etag = form["etag"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            _ = try await library.update(id, Self.input(form), ifMatch: etag, by: try Access.person())
            return .seeOther("/library/books/\(id)?done=saved")
        } catch let failure as ValidationFailure {
            var editor = Editor(bookId: id, form: form, errors: Self.localized(failure, form: form, t: t), etag: etag)
            editor.form["originalTitle"] = try await library.find(id).title
            return try await page(request, detail: id, editor: editor, status: .unprocessableContent)
        } catch let problem as Problem where problem.status == .preconditionFailed {
            // Show the book as it is now, keeping nothing stale; the person redoes their change.
            var editor = Self.editor(for: try await library.find(id), now: library.platform.clock.now)
            editor.message = t("library.errors.stale")
            return try await page(request, detail: id, editor: editor, status: .preconditionFailed)
        }
    }

    // MARK: Loans and deleting

    func checkOut(_ request: Request, id: Int) async throws -> Response {
        var request = request
        let form = try await request.formFields()
        let person = try Access.person()
        let t = Localizer(language: web.language(for: request))
        do {
            return .seeOther(Self.checkedOutPath(try await library.checkOut(id, by: person, name: form["name"])))
        } catch let problem as Problem where problem.status == .conflict || problem.status == .forbidden {
            let holder = try await library.find(id).loan?.person ?? ""
            let text =
                problem.status == .forbidden
                ? t("library.errors.forbidden")
                : problem.type.hasSuffix("held-for-line")
                    ? t("library.errors.held") : t("library.errors.onLoan", ["name": holder])
            return try await page(
                request, detail: id, notice: Notice(kind: "error", text: text), status: problem.status)
        } catch let failure as ValidationFailure {
            let text = Self.localized(failure, form: form, t: t).values.first ?? ""
            return try await page(
                request, detail: id, notice: Notice(kind: "error", text: text), status: .unprocessableContent)
        }
    }

    /// Waits in line for the book; back to it saying where they stand.
    func hold(_ request: Request, id: Int) async throws -> Response {
        let t = Localizer(language: web.language(for: request))
        do {
            let (_, position) = try await library.hold(id, by: try Access.person())
            return .seeOther("/library/books/\(id)?done=inLine&position=\(position)")
        } catch let problem as Problem where problem.status == .conflict {
            let kinds = ["already-waiting": "alreadyWaiting", "on-the-shelf": "onTheShelf", "yours": "yours"]
            let key = kinds.first { problem.type.hasSuffix($0.key) }?.value ?? "alreadyWaiting"
            return try await page(
                request, detail: id, notice: Notice(kind: "error", text: t("library.errors.\(key)")),
                status: .conflict)
        }
    }

    /// The book's page saying who checked it out (`?done=checkedOut&name=`).
    static func checkedOutPath(_ book: Book) -> String {
        let name = (book.loan?.person ?? "").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return "/library/books/\(book.id)?done=checkedOut&name=\(name)"
    }

    func giveBack(_ request: Request, id: Int) async throws -> Response {
        do {
            _ = try await library.giveBack(id, by: try Access.person())
        } catch let problem as Problem where problem.status == .conflict {
            // On the shelf already (someone else returned it): nothing to do.
        }
        return .seeOther("/library/books/\(id)?done=returned")
    }

    func delete(_ request: Request, id: Int) async throws -> Response {
        do {
            try await library.delete(id)
        } catch let problem as Problem where problem.status == .notFound {
            // Gone already.
        }
        return .seeOther("/library?done=deleted&count=1")
    }

    func deleteSelected(_ request: Request) async throws -> Response {
        var request = request
        let ids = try await request.form(Selection.self).ids ?? []
        let t = Localizer(language: web.language(for: request))
        guard !ids.isEmpty else {
            return try await page(
                request, detail: nil, notice: Notice(kind: "error", text: t("library.errors.noneSelected")),
                status: .unprocessableContent)
        }
        do {
            let deleted = try await library.delete(ids)
            return .seeOther("/library?done=deleted&count=\(deleted.count)")
        } catch let problem as Problem where problem.status == .notFound {
            // Someone deleted some meanwhile: delete what is left of the selection.
            let existing = Set(try await library.store.all().map(\.id))
            let deleted = try await library.delete(ids.filter(existing.contains))
            return .seeOther("/library?done=deleted&count=\(deleted.count)")
        }
    }

    /// The books picked for deletion (`ids[]=1&ids[]=2`).
    struct Selection: Decodable {
        var ids: [Int]?
    }
}

/// `/library`: the shelf, and a book's details or the editor beside it.
struct LibraryPage {
    let books: [Item]
    let hasBooks: Bool
    let noMatch: Bool
    let countText: String
    let q: String
    let sorts: [SortOption]
    let selectMode: Bool
    let selectHref: String
    let selectAllHref: String
    let doneHref: String
    let listHref: String
    let hasDetail: Bool
    /// When the page was made (ms since 1970), for the freshness line.
    let generatedAt: Int
    /// How often the page asks for changes when the event stream is unavailable.
    let refreshSeconds: Int
    let detail: Detail?
    let editor: Editor?
    let notice: LibraryRoutes.Notice?

    struct Item {
        let id: Int
        let title: String
        let author: String
        let status: String
        let statusText: String
        let current: Bool
        let checked: Bool
        let pickLabel: String
    }

    struct SortOption {
        let value: String
        let selected: Bool
        let label: String
    }

    struct Detail {
        let id: Int
        let title: String
        let author: String
        let status: String
        let statusText: String
        let fields: [Field]
        let loans: [String]
        let hasLoans: Bool
        let canCheckOut: Bool
        let canName: Bool
        let canReturn: Bool
        /// On loan to someone else: one may wait in line for it.
        let canHold: Bool
        let canEdit: Bool
        let deleteConfirm: String

        struct Field {
            let label: String
            let value: String
        }
    }

    struct Editor {
        let action: String
        let heading: String
        let cancelHref: String
        let fields: [Field]
        let etag: String?
        let message: String?

        struct Field {
            let name: String
            let label: String
            let value: String
            let required: Bool
            let autocomplete: String
            let hint: String?
            let error: String?
        }
    }
}
