import Foundation
import Hummingbird
import QuadCore

/// The Library API, a drop-in for the original clients plus what they lacked. Every route is a plain
/// Hummingbird route (documented in openapi.yaml): the original record must go out byte for byte as one
/// encoder writes it (explicit nulls, `yyyy-MM-dd HH:mm:ss` dates, a bare array for the list), each
/// book's ETag is the hash of those bytes, and a partial `PUT` must tell a field left out from one sent as
/// null, which the generated interface cannot. Trailing slashes (`/api/books/`) reach the same routes.
struct LibraryAPI {
    let library: Library

    func register(on routes: Routes) {
        routes.api(.get, "/api/books") { request, _ in try await self.list(request) }
        routes.api(.post, "/api/books") { request, context in try await self.create(request, context: context) }
        routes.api(.post, "/api/books/delete") { request, context in
            try await self.deleteMany(request, context: context)
        }
        routes.api(.get, "/api/books/:bookId") { request, context in
            try await self.show(request, id: Self.id(context))
        }
        routes.api(.put, "/api/books/:bookId") { request, context in
            try await self.update(request, context: context, id: Self.id(context))
        }
        routes.api(.delete, "/api/books/:bookId") { request, context in
            try await self.delete(request, id: Self.id(context))
        }
        routes.api(.post, "/api/books/:bookId/checkout") { request, context in
            try await self.checkOut(request, context: context, id: Self.id(context))
        }
        routes.api(.post, "/api/books/:bookId/return") { request, context in
            try await self.giveBack(id: Self.id(context))
        }
        routes.api(.delete, "/api/clean") { _, _ in try await self.clean() }
    }

    static func id(_ context: AppRequestContext) throws -> Int {
        let raw = try context.parameters.require("bookId")
        guard let id = Int(raw), id > 0 else { throw Problem.notFound("There is no book \(raw).") }
        return id
    }

    // MARK: Reading

    func list(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        var sort = BookSort.newest
        if let raw = query.get("sort") {
            guard let value = BookSort(rawValue: raw.lowercased()) else {
                throw Self.invalid("sort", "newest or oldest, not \"\(raw)\".")
            }
            sort = value
        }
        var status: BookStatus?
        if let raw = query.get("status"), !raw.isEmpty {
            let normalised = raw.lowercased().replacingOccurrences(of: "_", with: "-")
            guard let value = BookStatus(rawValue: normalised == "onloan" ? "on-loan" : normalised) else {
                throw Self.invalid("status", "available, on-loan or overdue, not \"\(raw)\".")
            }
            status = value
        }
        let now = library.platform.clock.now
        let books = Book.listed(
            try await library.store.all(), query: query.get("q"), status: status, sort: sort, now: now)
        let named = RequestInfo.current.person != nil
        let data =
            (try? BookRecord.encoder.encode(books.map { Library.record($0, now: now, named: named) }))
            ?? Data("[]".utf8)
        return Self.json(data, status: .ok)
    }

    func show(_ request: Request, id: Int) async throws -> Response {
        let book = try await library.find(id)
        return try await answer(book, status: .ok)
    }

    /// The book with its loans, and its ETag; without anyone's name for a visitor.
    func answer(_ book: Book, status: HTTPResponse.Status) async throws -> Response {
        let now = library.platform.clock.now
        let named = RequestInfo.current.person != nil
        let loans = named ? try await library.store.loans(book.id) : nil
        var response = Self.json(Library.encode(book, loans: loans, now: now, named: named), status: status)
        response.headers[.eTag] = Library.etag(book, now: now, named: named)
        response.headers[.location] = status == .created ? "/api/books/\(book.id)" : nil
        return response
    }

    static func json(_ data: Data, status: HTTPResponse.Status) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: CachePolicy.revalidate.rawValue],
            body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    static func invalid(_ field: String, _ message: String) -> Problem {
        Problem(
            .badRequest, type: "invalid-parameter", title: "Invalid parameter", detail: "\(field) must be \(message)",
            errors: [FieldError(field: field, message: message)])
    }

    // MARK: Changing

    func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        let person = try Access.person()
        var request = request
        let input = try BookInput(json: Data(buffer: try await request.collectBody(upTo: BodyLimit.json)))
        let book = try await library.create(input, by: person)
        return try await answer(book, status: .created)
    }

    func update(_ request: Request, context: AppRequestContext, id: Int) async throws -> Response {
        let person = try Access.person()
        var request = request
        let input = try BookInput(json: Data(buffer: try await request.collectBody(upTo: BodyLimit.json)))
        let book = try await library.update(id, input, ifMatch: request.headers[.ifMatch], by: person)
        return try await answer(book, status: .ok)
    }

    func delete(_ request: Request, id: Int) async throws -> Response {
        try await library.delete(id, ifMatch: request.headers[.ifMatch])
        return Response(status: .noContent)
    }

    struct CheckoutBody: Decodable {
        var name: String?
    }

    func checkOut(_ request: Request, context: AppRequestContext, id: Int) async throws -> Response {
        let person = try Access.person()
        var request = request
        let body = try await request.collectBody(upTo: BodyLimit.json)
        let name =
            body.readableBytes == 0 ? nil : try JSONDecoder().decode(CheckoutBody.self, from: Data(buffer: body)).name
        let book = try await library.checkOut(id, by: person, name: name)
        return try await answer(book, status: .ok)
    }

    func giveBack(id: Int) async throws -> Response {
        let book = try await library.giveBack(id, by: try Access.person())
        return try await answer(book, status: .ok)
    }

    struct DeleteBody: Decodable {
        var ids: [Int]
    }

    func deleteMany(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let body = try await request.decodeJSON(DeleteBody.self, context: context)
        guard !body.ids.isEmpty else {
            throw ValidationFailure(field: "ids", message: "Name at least one book.")
        }
        let deleted = try await library.delete(body.ids)
        let data = (try? JSONSerialization.data(withJSONObject: ["deleted": deleted])) ?? Data()
        return Self.json(data, status: .ok)
    }

    func clean() async throws -> Response {
        let count = try await library.clean()
        return Self.json(Data("{\"deleted\":\(count)}".utf8), status: .ok)
    }
}
