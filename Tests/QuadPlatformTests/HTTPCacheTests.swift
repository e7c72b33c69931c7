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
