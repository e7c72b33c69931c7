import CompressNIO
import Foundation
import Hummingbird
import HummingbirdTesting
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite struct HTTPCacheTests {
    @Test func jsonAnswersCarryAStrongETagAndRevalidate() async throws {
        try await TestApp.run { _, client in
            let etag = try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.cacheControl] == "no-cache")
                let etag = try #require(response.headers[.eTag])
                #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
                return etag
            }
            try await client.execute(uri: "/health", method: .get, headers: [.ifNoneMatch: etag]) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
                #expect(response.headers[.eTag] == etag)
            }
            try await client.execute(uri: "/health", method: .get, headers: [.ifNoneMatch: "\"other\", \(etag)"]) {
                #expect($0.status == .notModified)
            }
            try await client.execute(uri: "/health", method: .get, headers: [.ifNoneMatch: "\"stale\""]) {
                #expect($0.status == .ok)
            }
        }
    }

    /// Answers of 1 KB or more go gzipped to clients that accept it (static files gzipped once, at start), with the
    /// ETag made weak so that either form revalidates; others get the same bytes as before. All say `Vary`.
    @Test func largerAnswersAreGzippedForClientsThatAcceptIt() async throws {
        try await TestApp.run { _, client in
            let home = try await client.execute(uri: "/", method: .get) { String(buffer: $0.body) }
            let css = try #require(home.firstMatch(of: /\/assets\/app\.[0-9a-f]+\.css/)).output
            for uri in ["/api/openapi.yaml", String(css), "/"] {
                let plain = try await client.execute(uri: uri, method: .get) { $0 }
                #expect(plain.status == .ok && plain.headers[.contentEncoding] == nil)
                #expect(plain.headers[.vary]?.contains("Accept-Encoding") == true, "\(uri)")
                let zipped = try await client.execute(
                    uri: uri, method: .get, headers: [.acceptEncoding: "gzip, deflate, br"]
                ) { $0 }
                #expect(zipped.headers[.contentEncoding] == "gzip", "\(uri)")
                #expect(zipped.headers[.vary]?.contains("Accept-Encoding") == true)
                #expect(zipped.body.readableBytes < plain.body.readableBytes / 2, "\(uri): text shrinks")
                var body = zipped.body
                #expect(try body.decompress(with: .gzip()) == plain.body, "\(uri): the same bytes")
                if let etag = plain.headers[.eTag] {
                    #expect(zipped.headers[.eTag] == "W/" + etag)
                    for sent in [etag, "W/" + etag] {
                        try await client.execute(
                            uri: uri, method: .get, headers: [.acceptEncoding: "gzip", .ifNoneMatch: sent]
                        ) { #expect($0.status == .notModified && $0.body.readableBytes == 0, "\(uri)") }
                    }
                }
                let refused = try await client.execute(
                    uri: uri, method: .get, headers: [.acceptEncoding: "gzip;q=0, identity"]
                ) { $0 }
                #expect(refused.headers[.contentEncoding] == nil && refused.body == plain.body)
            }
            // Small answers go as they are.
            try await client.execute(uri: "/health", method: .get, headers: [.acceptEncoding: "gzip"]) {
                #expect($0.headers[.contentEncoding] == nil)
            }
        }
    }

    @Test func acceptEncodingIsReadAsWritten() {
        #expect(Gzip.accepted("gzip, deflate, br"))
        #expect(Gzip.accepted("br;q=1.0, gzip;q=0.8, *;q=0.1"))
        #expect(Gzip.accepted("*"))
        #expect(!Gzip.accepted("gzip;q=0"))
        #expect(!Gzip.accepted("br, *;q=0"))
        #expect(!Gzip.accepted("identity"))
        #expect(!Gzip.accepted(nil))
    }

    @Test func etagsFollowTheBytes() {
        #expect(HTTPCache.etag(for: Array("a".utf8)) == HTTPCache.etag(for: Array("a".utf8)))
        #expect(HTTPCache.etag(for: Array("a".utf8)) != HTTPCache.etag(for: Array("b".utf8)))
        #expect(HTTPCache.matches(ifNoneMatch: "*", etag: "\"x\""))
        #expect(HTTPCache.matches(ifNoneMatch: "W/\"x\"", etag: "\"x\""))
        #expect(!HTTPCache.matches(ifNoneMatch: nil, etag: "\"x\""))
    }

    @Test func assetsAreContentAddressedAndImmutable() async throws {
        try await TestApp.run { _, client in
            let page = try await client.execute(uri: "/", method: .get) { $0.text }
            let css = try #require(page.firstMatch(of: /href="(\/assets\/app\.[0-9a-f]+\.css)"/)?.1)
            try await client.execute(uri: String(css), method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.cacheControl] == "public, max-age=31536000, immutable")
                #expect(response.headers[.contentType]?.hasPrefix("text/css") == true)
            }
            try await client.execute(uri: "/sw.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.cacheControl] == "no-cache")
                #expect(response.text.contains(String(css)))
            }
        }
    }
}
