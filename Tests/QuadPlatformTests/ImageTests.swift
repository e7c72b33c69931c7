import Foundation
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite struct ImageTests {
    static let png = TestImages.png
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A PNG's chunk: length, type, data and a CRC (left zero: Quad reads the structure, not the checksums).
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let length = UInt32(data.count)
        return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) } + Array(type.utf8) + data + [0, 0, 0, 0]
    }

    /// A PNG that says it is `width` × `height` (its pixels left out: only the header is read).
    static func pngHeader(width: UInt32, height: UInt32) -> [UInt8] {
        let size = [width, height].flatMap { value in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        return signature + chunk("IHDR", size + [8, 2, 0, 0, 0]) + chunk("IEND", [])
    }
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)"]

    @Test func formatsAreRecognisedByTheirBytes() {
        #expect(ImageFormat(sniffing: Self.png) == .png)
        #expect(ImageFormat(sniffing: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0]) == .jpeg)
        #expect(ImageFormat(sniffing: Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)) == .webp)
        #expect(ImageFormat(sniffing: Array("GIF89a".utf8)) == nil)
        #expect(ImageFormat(sniffing: Array("<svg>".utf8)) == nil)
    }

    @Test func anImageIsReadToItsEndForItsRealTypeAndSize() {
        #expect(ImageHeader(Self.png) == ImageHeader(Self.pngHeader(width: 3, height: 2)))
        #expect(ImageHeader(Self.png)?.pixels == 6)
        // A PNG signature, then a page: not an image, whatever its first bytes say.
        #expect(ImageHeader(Self.signature + Array("<html><script>alert(1)</script>".utf8)) == nil)
        #expect(ImageHeader(Self.png + Array("<html>".utf8)) == nil)
        #expect(ImageHeader(Array(Self.png.dropLast(4))) == nil)
        let jpeg: [UInt8] = [
            0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0, 0xFF, 0xC0, 0, 11, 8, 0x01, 0xE0, 0x02, 0x80, 1, 1, 0x11, 0,
        ]
        #expect(ImageHeader(jpeg + [0xFF, 0xD9]).map { [$0.width, $0.height] } == [640, 480])
        #expect(ImageHeader(jpeg + Array("<html>".utf8)) == nil)
        var webp = Array("RIFF".utf8) + [22, 0, 0, 0] + Array("WEBPVP8X".utf8) + [10, 0, 0, 0, 0, 0, 0, 0]
        webp += [0x7F, 0x02, 0x00, 0xDF, 0x01, 0x00]  // 640 × 480, less one each
        #expect(ImageHeader(webp).map { [$0.width, $0.height] } == [640, 480])
        #expect(ImageHeader(webp + [0]) == nil)
    }

    @Test func anImageWithTooManyPixelsOrAPageBehindASignatureIsRefused() async throws {
        try await TestApp.run { _, client in
            var headers = Self.admin
            headers[.contentType] = "image/png"
            let huge = Self.pngHeader(width: 50_000, height: 50_000)
            try await client.execute(uri: "/api/images", method: .post, headers: headers, body: ByteBuffer(bytes: huge))
            {
                #expect($0.status == .unprocessableContent)
                #expect(($0.json["type"] as? String)?.hasSuffix("image-too-large") == true)
            }
            let page = Self.signature + Array("<html><script>alert(1)</script></html>".utf8)
            try await client.execute(uri: "/api/images", method: .post, headers: headers, body: ByteBuffer(bytes: page))
            {
                #expect($0.status == .unsupportedMediaType)
            }
        }
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
