import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import Testing

@testable import QuadServer

@Suite struct ImageTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 64)
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)"]

    @Test func formatsAreRecognisedByTheirBytes() {
        #expect(ImageFormat(sniffing: Self.png) == .png)
        #expect(ImageFormat(sniffing: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0]) == .jpeg)
        #expect(ImageFormat(sniffing: Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)) == .webp)
        #expect(ImageFormat(sniffing: Array("GIF89a".utf8)) == nil)
        #expect(ImageFormat(sniffing: Array("<svg>".utf8)) == nil)
    }

    @Test(arguments: TestDatabase.engines)
    func anUploadedImageIsServedForeverAtItsHash(engine: Database.Engine) async throws {
        try await TestApp.run(engine) { _, client in
            var headers = Self.admin
            headers[.contentType] = "image/jpeg"  // declared wrongly: the bytes decide
            let url = try await client.execute(
                uri: "/api/images", method: .post, headers: headers, body: ByteBuffer(bytes: Self.png)
            ) { response in
                #expect(response.status == .created)
                #expect(response.json["contentType"] as? String == "image/png")
                #expect(response.json["size"] as? Int == Self.png.count)
                return try #require(response.json["url"] as? String)
            }
            #expect(url.hasSuffix(".png") && url.hasPrefix("/images/"))
            try await client.execute(uri: url, method: .get) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == Self.png)
                #expect(response.headers[.contentType] == "image/png")
                #expect(response.headers[.cacheControl] == "public, max-age=31536000, immutable")
            }
            try await client.execute(uri: url.replacingOccurrences(of: ".png", with: ".jpg"), method: .get) {
                #expect($0.status == .notFound)
            }
        }
    }

    @Test func uploadsNeedTheAdminToken() async throws {
        try await TestApp.run { _, client in
            for headers: HTTPFields in [
                [.contentType: "image/png"], [.contentType: "image/png", .authorization: "Bearer wrong"],
            ] {
                try await client.execute(
                    uri: "/api/images", method: .post, headers: headers, body: ByteBuffer(bytes: Self.png)
                ) {
                    #expect($0.status == .unauthorized)
                    #expect($0.headers[.contentType] == "application/problem+json")
                    #expect($0.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                }
            }
        }
    }

    @Test func otherBytesAndOversizedUploadsAreRefused() async throws {
        try await TestApp.run { _, client in
            var headers = Self.admin
            headers[.contentType] = "image/png"
            try await client.execute(
                uri: "/api/images", method: .post, headers: headers, body: ByteBuffer(string: "<svg/>")
            ) {
                #expect($0.status == .unsupportedMediaType)
                #expect($0.headers[.contentType] == "application/problem+json")
            }
            let huge = ByteBuffer(bytes: Self.png + Array(repeating: 0, count: 5 * 1024 * 1024))
            try await client.execute(uri: "/api/images", method: .post, headers: headers, body: huge) {
                #expect($0.status == .contentTooLarge)
            }
        }
    }
}
