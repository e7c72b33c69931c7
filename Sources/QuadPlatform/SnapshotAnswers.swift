import Foundation
import HTTPTypes
import NIOCore
import OpenAPIRuntime

/// What every open page and app polls (`listRooms`, `listSpecials`, `getSchedules`), answered in the generated
/// interface from bytes encoded once per change (`Snapshot`, `AnswerCache`), as the fast path answers them,
/// instead of encoding them again for every request. Only the plain request is: one with a query
/// (`?minSpots=3`), or that the source leaves to the handler, goes on to its operation's handler. The ETag is the snapshot's; `HTTPCacheMiddleware`
/// answers a matching `If-None-Match` with 304.
package struct SnapshotAnswers: ServerMiddleware {
    package typealias Encoded = EncodedAnswer
    /// The encoded answer for clients that reach Quad at a base URL, or nil when the operation's handler answers.
    package typealias Source = @Sendable (_ baseURL: String) async throws -> Encoded?
    /// By operation id.
    let snapshots: [String: Source]

    /// A source that could not build its answer (the database unreachable): the server's fault, a 500, where the
    /// generated interface would take any middleware's error for a request that does not match the API.
    struct SourceFailure: Error {
        let underlying: any Error
    }

    package func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let snapshot = snapshots[operationID], request.path?.contains("?") == false else {
            return try await next(request, body, metadata)
        }
        let answer: Encoded?
        do {
            answer = try await snapshot(RequestInfo.current.baseURL)
        } catch let problem as Problem {
            throw problem
        } catch {
            throw SourceFailure(underlying: error)
        }
        guard let encoded = answer else { return try await next(request, body, metadata) }
        let sent = encoded.representation(acceptEncoding: request.headerFields[.acceptEncoding])
        var headers: HTTPFields = [
            .contentType: "application/json", .eTag: sent.etag, .cacheControl: CachePolicy.revalidate.rawValue,
        ]
        if sent.gzip { headers[.contentEncoding] = "gzip" }
        if sent.varies { headers.addVary(.acceptEncoding) }
        return (HTTPResponse(status: .ok, headerFields: headers), HTTPBody(sent.body.readableBytesView))
    }
}
