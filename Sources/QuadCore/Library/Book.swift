import Foundation

/// A book on the shelf and who has it. The original API's record (`BookRecord`) is derived from it.
public struct Book: Sendable, Equatable, Identifiable {
    /// An integer, as the original API numbered its books.
    public var id: Int
    public var title: String
    public var author: String
    public var publisher: String?
    /// Tags, in the order given; the original API sends them as one comma-separated string.
    public var categories: [String]
    /// Normalised: digits only (and a final `X` for an ISBN-10).
    public var isbn: String?
    public var addedAt: Date
    /// The loan running now, if any.
    public var loan: Loan?
    /// When the book was last checked out and by whom, kept after it comes back (as the original did
    /// for `lastCheckedOut`).
    public var lastCheckedOut: Date?
    public var lastCheckedOutBy: String?

    public init(
        id: Int, title: String, author: String, publisher: String? = nil, categories: [String] = [],
        isbn: String? = nil, addedAt: Date, loan: Loan? = nil, lastCheckedOut: Date? = nil,
        lastCheckedOutBy: String? = nil
    ) {
        self.id = id
        self.title = title
        self.author = author
        self.publisher = publisher
        self.categories = categories
        self.isbn = isbn
        self.addedAt = addedAt
        self.loan = loan
        self.lastCheckedOut = lastCheckedOut ?? loan?.checkedOutAt
        self.lastCheckedOutBy = lastCheckedOutBy ?? loan?.person
    }

    public func status(at now: Date) -> BookStatus {
        guard let loan else { return .available }
        return now > loan.dueAt ? .overdue : .onLoan
    }

    /// When `status(at:)` next changes by itself after `now`: the instant after its loan falls due.
    public func statusChanges(after now: Date) -> Date? {
        guard let due = loan?.dueAt, due >= now else { return nil }
        return due.addingTimeInterval(0.001)
    }

    /// The original app's path for the book.
    public var path: String { "/books/\(id)" }
}

/// One time a book went out: to whom, when, until when, and when it came back (nil while out).
public struct Loan: Sendable, Equatable {
    public var person: String
    /// The username (lowercased) when a signed-in person took it; nil for a name typed by an admin or
    /// sent by an original client.
    public var username: String?
    public var checkedOutAt: Date
    public var dueAt: Date
    public var returnedAt: Date?

    public init(person: String, username: String? = nil, checkedOutAt: Date, dueAt: Date, returnedAt: Date? = nil) {
        self.person = person
        self.username = username
        self.checkedOutAt = checkedOutAt
        self.dueAt = dueAt
        self.returnedAt = returnedAt
    }
}

public enum BookStatus: String, Codable, Sendable, CaseIterable {
    case available
    case onLoan = "on-loan"
    case overdue
}

/// How long a loan lasts.
public struct LoanPolicy: Sendable, Equatable {
    public static let defaultDays = 14
    public var days: Int

    public init(days: Int = LoanPolicy.defaultDays) {
        self.days = days
    }

    public func dueAt(checkedOutAt: Date) -> Date {
        checkedOutAt.addingTimeInterval(TimeInterval(days) * 86_400)
    }
}

/// The order the list is shown in: newest added first (the default) or oldest first.
public enum BookSort: String, Sendable, CaseIterable {
    case newest, oldest
}

extension Book {
    /// Whether the book matches a search: every word of `query` appears in the title, the author or a category,
    /// ignoring case and accents.
    public func matches(_ query: String) -> Bool { Shelf.matches(query, [title, author] + categories) }

    /// Filters and orders a shelf as `GET /api/books` does: search, status, then newest or oldest first
    /// (by when added, then by id).
    public static func listed(
        _ books: [Book], query: String? = nil, status: BookStatus? = nil, sort: BookSort = .newest, now: Date
    ) -> [Book] {
        let filtered = books.filter { book in
            (query.map { book.matches($0) } ?? true) && (status.map { book.status(at: now) == $0 } ?? true)
        }
        return Shelf.ordered(filtered, sort: sort) { ($0.addedAt, $0.id) }
    }
}

/// How a shelf is searched and ordered: the server's books and a client's records (`BookRecord.listed`) alike.
public enum Shelf {
    /// Every word of `query` is in one of `fields`, ignoring case and accents.
    public static func matches(_ query: String, _ fields: [String]) -> Bool {
        let words = fold(query).split(whereSeparator: { $0.isWhitespace })
        guard !words.isEmpty else { return true }
        let haystack = fold(fields.joined(separator: " "))
        return words.allSatisfy { haystack.contains($0) }
    }

    /// Newest or oldest first, by when added, then by id.
    public static func ordered<Item, Added: Comparable>(
        _ items: [Item], sort: BookSort, by added: (Item) -> (Added, Int)
    ) -> [Item] {
        let ascending = items.sorted { added($0) < added($1) }
        return sort == .oldest ? ascending : ascending.reversed()
    }

    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: Locale(identifier: "en"))
    }
}

/// Who may change a loan. Every way to lend or return a book (checkout, `PUT` of `lastCheckedOutBy`, a new
/// book sent out at once, return, the forms) asks here: members lend to themselves and return their own;
/// admins may do both for anyone.
public enum LoanPermission {
    /// A member lends only to themselves (their display name); an admin lends to anyone.
    public static func mayLend(to borrower: String, by person: Person) -> Bool {
        person.isAdmin || borrower == person.displayName
    }

    /// A member returns only a loan that is theirs; an admin returns any.
    public static func mayReturn(_ loan: Loan, by person: Person) -> Bool {
        person.isAdmin || loan.username == person.username.lowercased()
    }

    /// Whether `person` sees who has a book and who had it: people signed in, but not feed accounts (a car park's
    /// sensor has no business knowing who reads what) nor visitors.
    public static func seesBorrowers(_ person: Person?) -> Bool {
        guard let person else { return false }
        return person.role != .feed
    }

    /// Why `person` may not delete a book (nil: they may). A book on the shelf is anyone's who may edit it; on
    /// loan, its borrower's or an admin's (the loan would vanish with it); held for the next in line, an admin's.
    public static func deleteRefusal(loan: Loan?, heldForLine: Bool, by person: Person) -> DeleteRefusal? {
        if person.isAdmin { return nil }
        if let loan, !mayReturn(loan, by: person) { return .onLoan(to: loan.person) }
        if heldForLine { return .heldForLine }
        return nil
    }

    public enum DeleteRefusal: Sendable, Equatable {
        case onLoan(to: String)
        case heldForLine
    }

    /// The username a loan to `borrower` belongs to: the person's own when they lend to themselves.
    public static func owner(of borrower: String, lentBy person: Person) -> String? {
        borrower == person.displayName ? person.username.lowercased() : nil
    }
}
