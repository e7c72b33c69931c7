import Foundation
import HTTPTypes
import NIOCore
import OpenAPIRuntime

/// A feature's kept answers (`KeptAnswer`: `listRooms`, `listBooks`, a student's own `getSchedules`…), answered in
/// the generated interface from bytes encoded once per change, as the fast path answers them, instead of encoding
/// them again for every request. Only the plain request is: one with a query (`?minSpots=3`), or one the kept
/// answer leaves to the handler, goes on to its operation's handler. The ETag is the kept answer's;
/// `HTTPCacheMiddleware` answers a matching `If-None-Match` with 304.
package struct KeptAnswerMiddleware: ServerMiddleware {
    /// By operation id.
    let answers: [String: any AnyKeptAnswer]

    package init(_ answers: [any AnyKeptAnswer]) {
        self.answers = Dictionary(answers.map { ($0.operation, $0) }) { first, _ in first }
    }

    /// A kept answer that could not be built (the database unreachable): the server's fault, a 500, where the
    /// generated interface would take any middleware's error for a request that does not match the API.
    struct SourceFailure: Error {
        let underlying: any Error
    }

    package func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let kept = answers[operationID], request.path?.contains("?") == false else {
            return try await next(request, body, metadata)
        }
        let answer: EncodedAnswer?
        do {
            let info = RequestInfo.current
            answer = try await kept.answer(baseURL: info.baseURL, person: info.person)
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
