import CompressNIO
import HTTPTypes
import Hummingbird
import NIOCore

/// gzip for what Quad sends (the `gzip` content coding, RFC 9110 §8.4.1.3): static files once at start-up, kept
/// answers once per change (`EncodedAnswer`), other answers of 1 KB or more as they go (`ResponseCompression`).
///
/// A gzipped answer's ETag is the plain one made weak (`W/"…"`), as nginx does: the same version, another
/// representation. `If-None-Match` compares weakly, so either form gets a 304.
package enum Gzip {
    /// Smaller answers are sent as they are: a header and a round of zlib would save next to nothing.
    package static let threshold = 1024
    /// Larger ones too (pictures are already compressed; nothing else is this big): never a long stall.
    static let limit = 4 * 1024 * 1024

    /// Whether `Accept-Encoding` takes gzip: named (or `*`) without `q=0`.
    package static func accepted(_ header: String?) -> Bool {
        guard let header else { return false }
        var star = false
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let name = parts.first else { continue }
            let weight = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            let refused = weight <= 0
            if name == "gzip" || name == "x-gzip" { return !refused }
            if name == "*" { star = !refused }
        }
        return star
    }

    /// Whether answers of this `Content-Type` are worth compressing: text, JSON, SVG; not pictures or streams.
    package static func compressible(_ contentType: String?) -> Bool {
        guard let type = contentType?.lowercased() else { return false }
        if type.hasPrefix("text/event-stream") { return false }
        return type.hasPrefix("text/") || type.contains("json") || type.contains("javascript")
            || type.hasPrefix("image/svg+xml") || type.hasPrefix("application/yaml")
    }

    /// `bytes` gzipped, or nil when it is not worth it: under the threshold, over the limit, or no smaller.
    package static func compress(_ bytes: ByteBuffer) -> ByteBuffer? {
        guard (threshold...limit).contains(bytes.readableBytes) else { return nil }
        var input = bytes
        guard let output = try? input.compress(with: .gzip()), output.readableBytes < bytes.readableBytes else {
            return nil
        }
        return output
    }

    /// The ETag of the gzipped form of what `etag` names.
    package static func etag(_ etag: String) -> String { etag.hasPrefix("W/") ? etag : "W/" + etag }
}

/// Compresses answers of 1 KB or more (pages, JSON) for clients that accept gzip, and says that the answer
/// depends on `Accept-Encoding` (`Vary`) whether or not this one was. Answers already encoded (kept answers carry
/// their gzipped form), event streams and pictures pass as they are.
struct ResponseCompression<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        var response = try await next(request, context)
        guard response.status == .ok, response.headers[.contentEncoding] == nil,
            Gzip.compressible(response.headers[.contentType]),
            let length = response.body.contentLength, length >= Gzip.threshold
        else { return response }
        response.headers.addVary(.acceptEncoding)
        guard request.method == .get, length <= Gzip.limit, Gzip.accepted(request.headers[.acceptEncoding]) else {
            return response
        }
        let collector = CollectingWriter()
        try await response.body.write(collector.writer)
        guard let gzipped = Gzip.compress(collector.buffer) else { return response }
        response.body = ResponseBody(byteBuffer: gzipped)
        response.headers[.contentEncoding] = "gzip"
        response.headers[.contentLength] = String(gzipped.readableBytes)
        if let etag = response.headers[.eTag] { response.headers[.eTag] = Gzip.etag(etag) }
        return response
    }
}

extension HTTPFields {
    /// Adds `field` to `Vary` unless it is there.
    package mutating func addVary(_ field: HTTPField.Name) {
        let present = self[values: .vary].flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard !present.contains(field.canonicalName), !present.contains("*") else { return }
        self.append(HTTPField(name: .vary, value: field.rawName))
    }
}
