import Foundation
import OpenAPIRuntime
import QuadCore
import QuadPlatform

/// The Library's operations of the generated interface: a drop-in for the original clients plus what they
/// lacked. Records are QuadCore's `BookRecord` (explicit nulls, the original's dates), and a book's ETag is
/// the hash of its record; visitors get no one's name.
struct LibraryOperations: APIProtocol {
    let library: Library
    var platform: Platform { library.platform }
}

extension LibraryOperations {
    func listBooks(_ input: Operations.ListBooks.Input) async throws -> Operations.ListBooks.Output {
        let now = library.platform.clock.now
        let status = input.query.status.flatMap { BookStatus(rawValue: $0.rawValue) }
        let sort = input.query.sort.flatMap { BookSort(rawValue: $0.rawValue) } ?? .newest
        let books = Book.listed(
            try await library.allBooks(), query: input.query.q, status: status, sort: sort, now: now)
        let named = LoanPermission.seesBorrowers(RequestInfo.current.person)
        return .ok(.init(body: .json(books.map { Library.record($0, now: now, named: named) })))
    }

    func getBook(_ input: Operations.GetBook.Input) async throws -> Operations.GetBook.Output {
        .ok(.init(body: .json(try await answer(try await library.find(try Self.bookId(input.path.bookId))))))
    }

    func createBook(_ input: Operations.CreateBook.Input) async throws -> Operations.CreateBook.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the book as JSON.") }
        let book = try await library.create(try Self.bookInput(body), by: try Access.person())
        RequestInfo.current.headers.set(.location, "/api/books/\(book.id)")
        return .created(.init(body: .json(try await answer(book))))
    }

    func updateBook(_ input: Operations.UpdateBook.Input) async throws -> Operations.UpdateBook.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send the changes as JSON.") }
        let book = try await library.update(
            try Self.bookId(input.path.bookId), try Self.bookInput(body), ifMatch: input.headers.ifMatch,
            by: try Access.person())
        return .ok(.init(body: .json(try await answer(book))))
    }

    func deleteBook(_ input: Operations.DeleteBook.Input) async throws -> Operations.DeleteBook.Output {
        try await library.delete(try Self.bookId(input.path.bookId), ifMatch: input.headers.ifMatch)
        return .noContent(.init())
    }

    func deleteBooks(_ input: Operations.DeleteBooks.Input) async throws -> Operations.DeleteBooks.Output {
        guard case .json(let body) = input.body else { throw Problem.malformedBody("Send {\"ids\": [1, 2]}.") }
        guard !body.ids.isEmpty else { throw ValidationFailure(field: "ids", message: "Name at least one book.") }
        return .ok(.init(body: .json(.init(deleted: try await library.delete(body.ids)))))
    }

    func checkOutBook(_ input: Operations.CheckOutBook.Input) async throws -> Operations.CheckOutBook.Output {
        var name: String?
        if case .json(let body) = input.body { name = body.name }
        let book = try await library.checkOut(try Self.bookId(input.path.bookId), by: try Access.person(), name: name)
        return .ok(.init(body: .json(try await answer(book))))
    }

    func returnBook(_ input: Operations.ReturnBook.Input) async throws -> Operations.ReturnBook.Output {
        let book = try await library.giveBack(try Self.bookId(input.path.bookId), by: try Access.person())
        return .ok(.init(body: .json(try await answer(book))))
    }

    func cleanLibrary(_ input: Operations.CleanLibrary.Input) async throws -> Operations.CleanLibrary.Output {
        .ok(.init(body: .json(.init(deleted: try await library.clean()))))
    }

    /// The book with its loans, its ETag in the `ETag` header; without anyone's name for a visitor.
    private func answer(_ book: Book) async throws -> BookRecord {
        let now = library.platform.clock.now
        let named = LoanPermission.seesBorrowers(RequestInfo.current.person)
        let loans = named ? try await library.store.loans(book.id) : nil
        let record = Library.record(book, loans: loans, now: now, named: named)
        if let etag = record.etag { RequestInfo.current.headers.set(.eTag, etag) }
        return record
    }

    /// Books are numbered from 1: anything else names no book.
    static func bookId(_ id: Int) throws -> Int {
        guard id > 0 else { throw Problem.notFound("There is no book \(id).") }
        return id
    }

    /// The body as the original clients send it, read field by field (null is not the same as left out).
    static func bookInput(_ body: OpenAPIObjectContainer) throws -> BookInput {
        func plain(_ value: (any Sendable)?) -> Any {
            switch value {
            case nil: NSNull()
            case let array as [(any Sendable)?]: array.map(plain)
            case let some?: some
            }
        }
        return try BookInput(fields: body.value.mapValues(plain))
    }
}

extension LibraryOperations {
    func holdBook(_ input: Operations.HoldBook.Input) async throws -> Operations.HoldBook.Output {
        let (place, position) = try await library.hold(try Self.bookId(input.path.bookId), by: try Access.person())
        return .created(.init(body: .json(WaitingPlaceRecord(place, position: position))))
    }
}
