import Hummingbird
import NIOCore

/// Request body limits: 5 MiB for the operations and forms whose body is a file (an image, a CSV file: the contract
/// or the form's declaration says which), 1 MiB for
/// every other body, whatever type the request declares.
package enum BodyLimit {
    package static let json = 1024 * 1024
    package static let upload = 5 * 1024 * 1024
}

/// Refuses an oversized body with 413 before any handler sees it, whether it is announced by `Content-Length`
/// or found while reading a chunked one, and buffers the rest, so handlers and the idempotency store read the
/// same bytes.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    package let table: AccessTable

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        guard [.post, .put, .patch, .delete].contains(request.method) else { return try await next(request, context) }
        let upload = context.endpointPath.flatMap { table.entry(request.method, endpoint: $0) }?.upload ?? false
        let limit = upload ? BodyLimit.upload : BodyLimit.json
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw Problem.tooLarge(limit: limit)
        }
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw Problem.tooLarge(limit: limit)
        }
        if body.readableBytes == 0, request.headers[.contentLength] == nil {
            // Said, so the generated interface knows the body is empty (`EmptyBodyAsNone`).
            var head = request.head
            head.headerFields[.contentLength] = "0"
            request = Request(head: head, body: .init(buffer: body))
        }
        return try await next(request, context)
    }
}
