import Foundation

/// A book as the API sends it: the original record (`author`, `categories` as one comma-separated string,
/// `id`, `lastCheckedOut` as `yyyy-MM-dd HH:mm:ss` UTC or null, `lastCheckedOutBy` or null, `publisher`,
/// `title`, `url` `/books/{id}`), so the original clients decode it, plus what they lacked.
public struct BookRecord: Codable, Sendable, Hashable {
    public var author: String
    public var categories: String
    public var id: Int
    public var lastCheckedOut: String?
    public var lastCheckedOutBy: String?
    public var publisher: String
    public var title: String
    public var url: String
    // New fields.
    public var isbn: String?
    public var status: BookStatus
    /// Who has the book now (nil when it is on the shelf); `lastCheckedOutBy` is kept after a return.
    public var borrower: String?
    public var dueAt: String?
    public var addedAt: String
    /// Every loan, newest first; only in the answer for one book.
    public var loans: [LoanRecord]?
    /// The book's ETag (the `ETag` header of its own answer), in every record, lists included, so a client
    /// editing a book it saw in the list sends it as `If-Match`. Not part of what the ETag hashes.
    public var etag: String?

    public struct LoanRecord: Codable, Sendable, Hashable {
        public var person: String
        public var checkedOutAt: String
        public var dueAt: String
        public var returnedAt: String?

        public init(_ loan: Loan) {
            person = loan.person
            checkedOutAt = LibraryDate.format(loan.checkedOutAt)
            dueAt = LibraryDate.format(loan.dueAt)
            returnedAt = loan.returnedAt.map(LibraryDate.format)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(person, forKey: .person)
            try container.encode(checkedOutAt, forKey: .checkedOutAt)
            try container.encode(dueAt, forKey: .dueAt)
            try container.encode(returnedAt, forKey: .returnedAt)
        }
    }

    public init(_ book: Book, now: Date, loans: [Loan]? = nil) {
        author = book.author
        categories = book.categories.joined(separator: ", ")
        id = book.id
        lastCheckedOut = book.lastCheckedOut.map(LibraryDate.format)
        lastCheckedOutBy = book.loan == nil ? nil : book.lastCheckedOutBy
        publisher = book.publisher ?? ""
        title = book.title
        url = book.path
        isbn = book.isbn
        status = book.status(at: now)
        borrower = book.loan?.person
        dueAt = book.loan.map { LibraryDate.format($0.dueAt) }
        addedAt = LibraryDate.format(book.addedAt)
        self.loans = loans?.map(LoanRecord.init)
    }

    /// The record without anyone's name, for visitors: the status and due date stay, who has or had the book
    /// goes (the loan history too).
    public var withoutNames: BookRecord {
        var record = self
        record.lastCheckedOutBy = nil
        record.borrower = nil
        record.loans = nil
        return record
    }

    /// Nulls are written out, as the original server did: its clients expect every key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(author, forKey: .author)
        try container.encode(categories, forKey: .categories)
        try container.encode(id, forKey: .id)
        try container.encode(lastCheckedOut, forKey: .lastCheckedOut)
        try container.encode(lastCheckedOutBy, forKey: .lastCheckedOutBy)
        try container.encode(publisher, forKey: .publisher)
        try container.encode(title, forKey: .title)
        try container.encode(url, forKey: .url)
        try container.encode(isbn, forKey: .isbn)
        try container.encode(status, forKey: .status)
        try container.encode(borrower, forKey: .borrower)
        try container.encode(dueAt, forKey: .dueAt)
        try container.encode(addedAt, forKey: .addedAt)
        try container.encodeIfPresent(loans, forKey: .loans)
        try container.encodeIfPresent(etag, forKey: .etag)
    }

    /// The encoder every book answer uses, so equal books give equal bytes (and ETags).
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

/// A field of a partial update: left out, sent as null, or sent with a value.
public enum Sent<Value: Sendable & Equatable>: Sendable, Equatable {
    case absent
    case null
    case value(Value)

    public var value: Value? {
        if case .value(let value) = self { value } else { nil }
    }

    public var isAbsent: Bool { self == .absent }
}

/// What a client sends for a book (`POST` and partial `PUT`), read field by field so that a field left
/// out differs from one sent as null, and a field of the wrong type is named.
public struct BookInput: Sendable, Equatable {
    public var title: Sent<String> = .absent
    public var author: Sent<String> = .absent
    public var publisher: Sent<String> = .absent
    /// A comma-separated string (the original form) or an array of strings.
    public var categories: Sent<[String]> = .absent
    public var isbn: Sent<String> = .absent
    public var lastCheckedOutBy: Sent<String> = .absent
    /// Accepted in every form `LibraryDate.parse` reads.
    public var lastCheckedOut: Sent<Date> = .absent

    public init() {}

    /// Reads a JSON object; every field at fault is named.
    public init(json data: Data) throws(ValidationFailure) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw ValidationFailure(field: "body", message: "The body is not valid JSON.")
        }
        guard let fields = object as? [String: Any] else {
            throw ValidationFailure(field: "body", message: "Send the book as a JSON object.")
        }
        try self.init(fields: fields)
    }

    public init(fields: [String: Any]) throws(ValidationFailure) {
        var errors: [FieldError] = []
        func text(_ key: String) -> Sent<String> {
            guard let raw = fields[key] else { return .absent }
            if raw is NSNull { return .null }
            if let string = raw as? String { return .value(string) }
            errors.append(.init(field: key, message: "\(key) must be a string or null."))
            return .absent
        }
        title = text("title")
        author = text("author")
        publisher = text("publisher")
        isbn = text("isbn")
        lastCheckedOutBy = text("lastCheckedOutBy")
        switch fields["categories"] {
        case nil: categories = .absent
        case is NSNull: categories = .null
        case let string as String: categories = .value(BookValidation.categories(string))
        case let array as [Any] where array.allSatisfy({ $0 is String }):
            categories = .value(array.compactMap { $0 as? String })
        default:
            errors.append(
                .init(field: "categories", message: "categories must be a comma-separated string or a list of strings.")
            )
        }
        switch fields["lastCheckedOut"] {
        case nil: lastCheckedOut = .absent
        case is NSNull: lastCheckedOut = .null
        case let string as String:
            if let date = LibraryDate.parse(string) {
                lastCheckedOut = .value(date)
                if !AcceptedDates.contains(date) {
                    errors.append(.init(field: "lastCheckedOut", message: AcceptedDates.message))
                }
            } else {
                errors.append(
                    .init(field: "lastCheckedOut", message: "A date is written yyyy-MM-dd HH:mm:ss (UTC)."))
            }
        default:
            errors.append(.init(field: "lastCheckedOut", message: "A date is written yyyy-MM-dd HH:mm:ss (UTC)."))
        }
        guard errors.isEmpty else { throw ValidationFailure(errors) }
    }

    /// The fields of a new book, validated.
    public func newBook() throws(ValidationFailure) -> BookValidation.Fields {
        try BookValidation.book(
            title: title.value, author: author.value, publisher: publisher.value, categories: categories.value ?? [],
            isbn: isbn.value)
    }

    /// `book` with the fields sent applied (fields left out keep their value; null clears an optional one),
    /// validated.
    public func applied(to book: Book) throws(ValidationFailure) -> BookValidation.Fields {
        func merged(_ sent: Sent<String>, _ current: String?) -> String? {
            switch sent {
            case .absent: current
            case .null: nil
            case .value(let value): value
            }
        }
        let categories: [String] =
            switch self.categories {
            case .absent: book.categories
            case .null: []
            case .value(let value): value
            }
        return try BookValidation.book(
            title: merged(title, book.title), author: merged(author, book.author),
            publisher: merged(publisher, book.publisher), categories: categories, isbn: merged(isbn, book.isbn))
    }
}

extension BookRecord {
    /// Records as `GET /api/books` lists them: searched, then newest or oldest first (`addedAt` is written
    /// `yyyy-MM-dd HH:mm:ss`, so its text sorts as its time does).
    public static func listed(_ records: [BookRecord], query: String, sort: BookSort) -> [BookRecord] {
        Shelf.ordered(records.filter { Shelf.matches(query, [$0.title, $0.author, $0.categories]) }, sort: sort) {
            ($0.addedAt, $0.id)
        }
    }
}
