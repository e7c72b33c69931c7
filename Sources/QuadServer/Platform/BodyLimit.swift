import Hummingbird

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
        if body.readableBytes == 0, request.headers[.contentLength] == nil {
            // Said, so the generated interface knows the body is empty (`EmptyBodyAsNone`).
            var head = request.head
            head.headerFields[.contentLength] = "0"
            request = Request(head: head, body: .init(buffer: body))
        }
        return try await next(request, context)
    }
}
