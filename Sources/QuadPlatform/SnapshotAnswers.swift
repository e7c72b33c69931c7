import Foundation
import HTTPTypes
import NIOCore
import OpenAPIRuntime

/// The lists every open page and app polls (`listRooms`, `listSpecials`), answered in the generated interface
/// from bytes encoded once per change (`Snapshot`), as the anonymous fast path
/// answers them, instead of encoding them again for every request. Only the whole list is: a request with a
/// query (`?minSpots=3`) goes on to its operation's handler. The ETag is the snapshot's; `HTTPCacheMiddleware`
/// answers a matching `If-None-Match` with 304.
package struct SnapshotAnswers: ServerMiddleware {
    package typealias Encoded = (body: ByteBuffer, etag: String)
    /// The encoded list for clients that reach Quad at a base URL.
    package typealias Source = @Sendable (_ baseURL: String) async throws -> Encoded
    /// By operation id.
    let snapshots: [String: Source]

    package func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let snapshot = snapshots[operationID], request.path?.contains("?") == false else {
            return try await next(request, body, metadata)
        }
        let encoded = try await snapshot(RequestInfo.current.baseURL)
        let headers: HTTPFields = [
            .contentType: "application/json", .eTag: encoded.etag, .cacheControl: CachePolicy.revalidate.rawValue,
        ]
        return (HTTPResponse(status: .ok, headerFields: headers), HTTPBody(encoded.body.readableBytesView))
    }
}
