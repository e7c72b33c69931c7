import Foundation
import HTTPTypes
import OpenAPIRuntime
import QuadCore

/// What a person types for a book: every field optional, so the same draft adds a book (title and author
/// needed, the server says so) or edits one (only the fields given change: a partial `PUT`).
public struct BookDraft: Codable, Sendable, Equatable {
    public var title: String?
    public var author: String?
    public var publisher: String?
    /// Comma-separated, as the original API takes them.
    public var categories: String?
    public var isbn: String?

    public init(
        title: String? = nil, author: String? = nil, publisher: String? = nil, categories: String? = nil,
        isbn: String? = nil
    ) {
        self.title = title
        self.author = author
        self.publisher = publisher
        self.categories = categories
        self.isbn = isbn
    }

    public var isEmpty: Bool { self == BookDraft() }
}

/// The Library API, called through the kit's middleware (not the generated client) and read with QuadCore's
/// `BookRecord`, which keeps the original record's explicit nulls and date forms.
extension QuadClient {
    /// `GET /api/books`: searched (`q`) and sorted on the server.
    public func books(query: String? = nil, sort: BookSort = .newest) async throws -> Fetched<[BookRecord]> {
        var parts = URLComponents()
        var items = [URLQueryItem(name: "sort", value: sort.rawValue)]
        if let query, !query.trimmingCharacters(in: .whitespaces).isEmpty {
            items.append(URLQueryItem(name: "q", value: query))
        }
        parts.queryItems = items
        let fetched = try await get(path: "/api/books?" + (parts.percentEncodedQuery ?? ""), operationID: "listBooks")
        return Fetched(
            value: try Self.decode([BookRecord].self, fetched.value, what: "the books"),
            revalidated: fetched.revalidated, etag: fetched.etag)
    }

    /// `GET /api/books/{id}`: the book with its loans, newest first.
    public func book(id: Int) async throws -> BookRecord {
        let fetched = try await get(path: "/api/books/\(id)", operationID: "getBook")
        return try Self.decode(BookRecord.self, fetched.value, what: "the book")
    }

    /// `POST /api/books`. A 422 throws `KitError.invalid` naming each field.
    public func addBook(_ draft: BookDraft) async throws -> BookRecord {
        try await bookWrite(.post, "/api/books", body: try JSONEncoder().encode(draft), operationID: "createBook")
    }

    /// `PUT /api/books/{id}` with only the fields in `draft`. `ifMatch` is the book's ETag as last seen (its
    /// record's `etag`): when someone else changed the book since, nothing changes and this throws a 412
    /// problem that says so (`KitError.isChangedBySomeoneElse`). Without it the edit is unconditional.
    public func updateBook(id: Int, _ draft: BookDraft, ifMatch: String? = nil) async throws -> BookRecord {
        do {
            return try await bookWrite(
                .put, "/api/books/\(id)", body: try JSONEncoder().encode(draft), operationID: "updateBook",
                ifMatch: ifMatch)
        } catch let error as KitError where error.isChangedBySomeoneElse {
            // A retry after a lost answer meets its own first attempt: when the book already says what was
            // asked, nothing of anyone's is lost, so that is the answer.
            if let current = try? await book(id: id), Self.holds(draft, current) {
                var answer = current
                answer.loans = nil
                return answer
            }
            throw KitError.problem(
                status: 412, type: "stale-book",
                detail: "book \(id) was changed by someone else since you loaded it; nothing was saved. "
                    + "Load it again and redo your change.")
        }
    }

    /// Whether `book` already has every field of `draft` (compared as the server tidies them).
    static func holds(_ draft: BookDraft, _ book: BookRecord) -> Bool {
        func fields(_ draft: BookDraft) -> BookValidation.Fields? {
            try? BookValidation.book(
                title: draft.title ?? book.title, author: draft.author ?? book.author,
                publisher: draft.publisher ?? book.publisher,
                categories: BookValidation.categories(draft.categories ?? book.categories),
                isbn: draft.isbn ?? book.isbn)
        }
        guard let wanted = fields(draft) else { return false }
        return wanted == fields(BookDraft())
    }

    /// `POST /api/books/{id}/checkout` for the signed-in person; `idempotencyKey` names the intent, so a
    /// retried checkout happens once.
    public func checkOutBook(id: Int, idempotencyKey: String) async throws -> BookRecord {
        try await bookWrite(
            .post, "/api/books/\(id)/checkout", body: Data("{}".utf8), operationID: "checkOutBook",
            idempotencyKey: idempotencyKey)
    }

    /// `POST /api/books/{id}/return`.
    public func returnBook(id: Int) async throws -> BookRecord {
        try await bookWrite(.post, "/api/books/\(id)/return", body: Data("{}".utf8), operationID: "returnBook")
    }

    /// `POST /api/books/delete`: all of `ids` or none (a 404 names the unknown ones); the ids deleted.
    public func deleteBooks(ids: [Int]) async throws -> [Int] {
        struct Body: Encodable { var ids: [Int] }
        struct Answer: Decodable { var deleted: [Int] }
        let data = try await raw(
            .post, "/api/books/delete", body: try JSONEncoder().encode(Body(ids: ids)), operationID: "deleteBooks")
        return try Self.decode(Answer.self, data, what: "the answer").deleted
    }

    private func bookWrite(
        _ method: HTTPRequest.Method, _ path: String, body: Data, operationID: String, idempotencyKey: String? = nil,
        ifMatch: String? = nil
    ) async throws -> BookRecord {
        let data = try await raw(
            method, path, body: body, operationID: operationID, idempotencyKey: idempotencyKey, ifMatch: ifMatch)
        return try Self.decode(BookRecord.self, data, what: "the book")
    }

    /// A JSON request; the body of a 2xx answer, else the server's problem as a `KitError`.
    func raw(
        _ method: HTTPRequest.Method, _ path: String, body: Data, operationID: String, idempotencyKey: String? = nil,
        ifMatch: String? = nil
    ) async throws -> Data {
        var fields: HTTPFields = [.accept: "application/json", .contentType: "application/json"]
        if let idempotencyKey { fields[.idempotencyKey] = idempotencyKey }
        if let ifMatch { fields[.ifMatch] = ifMatch }
        let (response, answer) = try await send(
            HTTPRequest(method: method, scheme: nil, authority: nil, path: path, headerFields: fields),
            body: HTTPBody(body), operationID: operationID)
        let data = if let answer { try await Data(collecting: answer, upTo: 16 * 1024 * 1024) } else { Data() }
        guard (200..<300).contains(response.status.code) else {
            throw Self.problem(status: response.status.code, body: data)
        }
        return data
    }

    static func decode<T: Decodable>(_ type: T.Type, _ data: Data, what: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw KitError.unexpected("The server's answer for \(what) could not be read: \(error)")
        }
    }
}

extension KitError {
    /// Whether the server refused a write because someone else changed the thing since it was loaded (412,
    /// a stale `If-Match`): nothing was saved; load it again and redo the change.
    public var isChangedBySomeoneElse: Bool {
        if case .problem(status: 412, _, _) = self { return true }
        return false
    }
}
