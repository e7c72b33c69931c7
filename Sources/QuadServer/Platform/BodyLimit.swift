import HTTPTypes
import Hummingbird
import OpenAPIRuntime

/// Request body limits: 1 MiB for JSON, 5 MiB for uploads (images).
enum BodyLimit {
    static let json = 1024 * 1024
    static let upload = 5 * 1024 * 1024

    static func limit(for request: Request) -> Int {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        let isUpload =
            type.hasPrefix("image/") || type.hasPrefix("multipart/form-data")
            || type.hasPrefix("application/octet-stream")
        return isUpload ? upload : json
    }
}

/// Refuses an oversized body with 413 before any handler sees it, and buffers the rest, so handlers
/// and the idempotency store read the same bytes.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        guard [.post, .put, .patch, .delete].contains(request.method) else { return try await next(request, context) }
        let limit = BodyLimit.limit(for: request)
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw Problem.tooLarge(limit: limit)
        }
        var request = request
        let body = try await request.collectBody(upTo: limit)
        if body.readableBytes == 0 {
            // An empty body is no body, whatever its type says (`curl -X POST -H 'Content-Type: application/json'`):
            // the generated interface then sees none (`EmptyBodyAsNone`).
            var head = request.head
            head.headerFields[.contentType] = nil
            head.headerFields[.contentLength] = "0"
            request = Request(head: head, body: .init(buffer: body))
        }
        return try await next(request, context)
    }
}

/// Hands the generated interface no body instead of an empty one: an operation whose body is optional would
/// otherwise try to decode nothing as JSON and answer 400.
struct EmptyBodyAsNone: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let empty = body?.length == .known(0)
        return try await next(request, empty ? nil : body, metadata)
    }
}
