import Foundation
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
        if body.readableBytes == 0, request.headers[.contentLength] == nil {
            // Said, so the generated interface knows the body is empty (`EmptyBodyAsNone`).
            var head = request.head
            head.headerFields[.contentLength] = "0"
            request = Request(head: head, body: .init(buffer: body))
        }
        return try await next(request, context)
    }
}

/// Hands the generated interface no body instead of an empty JSON one (`curl -X POST -H 'Content-Type:
/// application/json'`): an operation whose body is optional would otherwise try to decode nothing and answer 400.
/// An empty upload stays an (empty) upload, which is refused as not an image.
struct EmptyBodyAsNone: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let type = request.headerFields[.contentType]?.lowercased() ?? "application/json"
        let none = body?.length == .known(0) && type.hasPrefix("application/json")
        return try await next(request, none ? nil : body, metadata)
    }
}

/// RFC 3339 dates as the contract's `date-time` allows them, fractional seconds or not; written without.
struct RFC3339Dates: DateTranscoder {
    func encode(_ date: Date) throws -> String { date.formatted(.iso8601) }

    func decode(_ text: String) throws -> Date {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        throw DecodingError.dataCorrupted(
            .init(codingPath: [], debugDescription: "\(text) is not an RFC 3339 date-time."))
    }
}
