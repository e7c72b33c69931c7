import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// How long a client may keep a response.
public enum CachePolicy: String, Sendable {
    /// Live data: keep it, but ask every time (`If-None-Match` makes the asking cheap).
    case revalidate = "no-cache"
    /// Content-addressed assets: the URL changes when the bytes do.
    case immutable = "public, max-age=31536000, immutable"
    case noStore = "no-store"
    /// A personal feed fetched by a key in its URL (a calendar): no shared cache, nor the client's, may keep it.
    case personalFeed = "private, no-store"
}

public enum HTTPCache {
    /// A strong ETag: the first 128 bits of the body's SHA-256.
    public static func etag(for bytes: some DataProtocol) -> String {
        let digest = SHA256.hash(data: bytes)
        return "\"" + digest.prefix(16).hex + "\""
    }

    /// Whether an `If-None-Match` header names this ETag (weak comparison, RFC 9110 §13.1.2).
    public static func matches(ifNoneMatch header: String?, etag: String) -> Bool {
        guard let header else { return false }
        if header == etag { return true }  // what clients send back, checked before any parsing
        let wanted = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == wanted
        }
    }

    /// A ready response for bytes whose ETag is known: 304 with no body when the client has them.
    public static func response(
        _ body: ByteBuffer, etag: String, contentType: String, policy: CachePolicy, request: Request
    ) -> Response {
        var headers: HTTPFields = [.eTag: etag, .cacheControl: policy.rawValue]
        if matches(ifNoneMatch: request.headers[.ifNoneMatch], etag: etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }
}

/// Gives every successful JSON (or YAML: the contract) answer to a GET a strong ETag and `Cache-Control: no-cache`, and answers a
/// matching `If-None-Match` with 304 and no body. Routes that know their ETag already (kept answers) set it
/// themselves; then only the comparison is done here.
struct HTTPCacheMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        guard request.method == .get || request.method == .head else { return try await next(request, context) }
        var response = try await next(request, context)
        guard response.status == .ok else { return response }
        if response.headers[.contentType]?.hasPrefix("text/calendar") == true {
            response.headers[.cacheControl] = CachePolicy.personalFeed.rawValue
            return response
        }

        if let etag = response.headers[.eTag] {
            if HTTPCache.matches(ifNoneMatch: request.headers[.ifNoneMatch], etag: etag) {
                return Response(status: .notModified, headers: Self.validatorHeaders(of: response.headers))
            }
            return response
        }
        let type = response.headers[.contentType] ?? ""
        guard type.hasPrefix("application/json") || type.hasPrefix("application/yaml") else { return response }
        let collector = CollectingWriter()
        try await response.body.write(collector.writer)
        let body = collector.buffer
        let etag = HTTPCache.etag(for: body.readableBytesView)
        response.headers[.eTag] = etag
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = CachePolicy.revalidate.rawValue }
        if HTTPCache.matches(ifNoneMatch: request.headers[.ifNoneMatch], etag: etag) {
            return Response(status: .notModified, headers: Self.validatorHeaders(of: response.headers))
        }
        response.body = .init(byteBuffer: body)
        return response
    }

    /// A 304 repeats the headers a 200 would have sent that describe caching (RFC 9110 §15.4.5).
    static func validatorHeaders(of headers: HTTPFields) -> HTTPFields {
        var kept = HTTPFields()
        for name in [HTTPField.Name.eTag, .cacheControl, .vary, .expires, .contentLocation, .date] {
            if let value = headers[name] { kept[name] = value }
        }
        return kept
    }
}

/// Gathers a response body into one buffer.
struct CollectingWriter {
    private final class Storage: @unchecked Sendable {
        package var buffer = ByteBuffer()
    }
    private let storage = Storage()

    package var buffer: ByteBuffer { storage.buffer }

    package var writer: some ResponseBodyWriter { Writer(storage: storage) }

    private struct Writer: ResponseBodyWriter {
        let storage: Storage
        package mutating func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            storage.buffer.writeBuffer(&buffer)
        }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
