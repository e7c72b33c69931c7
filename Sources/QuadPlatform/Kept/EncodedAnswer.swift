import Foundation
import NIOCore
import QuadCore

/// An answer's bytes as sent, with their ETag (made once, when encoded).
package struct EncodedAnswer: Sendable {
    package let body: ByteBuffer
    package let etag: String
    /// When these bytes go stale by themselves (a special's validity starts or ends), if ever.
    package let expires: Date?
    /// The same bytes gzipped, made once here for the clients that accept it; nil when not worth it (`Gzip`).
    package let gzipped: ByteBuffer?

    package init(body: ByteBuffer, etag: String, expires: Date?) {
        self.body = body
        self.etag = etag
        self.expires = expires
        self.gzipped = Gzip.compress(body)
    }

    /// What to send a client whose `Accept-Encoding` is `acceptEncoding`: the gzipped bytes (with the weak ETag)
    /// when it takes them; `varies` when the answer depends on that header.
    package func representation(
        acceptEncoding: String?
    ) -> (body: ByteBuffer, etag: String, gzip: Bool, varies: Bool) {
        guard let gzipped else { return (body, etag, false, false) }
        return Gzip.accepted(acceptEncoding) ? (gzipped, Gzip.etag(etag), true, true) : (body, etag, false, true)
    }
}

extension EncodedAnswer {
    /// `value` as the API writes it (sorted keys, unescaped slashes, ISO 8601 dates), with its ETag.
    package static func json(_ value: some Encodable, expires: Date? = nil) throws -> EncodedAnswer {
        let data = try encoder.encode(value)
        return EncodedAnswer(body: ByteBuffer(data: data), etag: HTTPCache.etag(for: data), expires: expires)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}
