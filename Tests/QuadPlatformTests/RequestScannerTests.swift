import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import QuadCore
import Testing

@testable import QuadPlatform

/// What `RequestScanner` reads itself, NIO's HTTP/1 decoder reads the same way: the same method, target, version and
/// fields, kept alive, no body, and the same end (the next request starts where both say). Anything else is the
/// decoder's, whole.
@Suite struct RequestScannerTests {
    static let poll =
        "GET /api/rooms HTTP/1.1\r\nHost: quad.test\r\nAuthorization: Bearer abc\r\nIf-None-Match: \"e1\"\r\n"
        + "Cookie: a=1\r\ncookie: quad_session=x\r\nAccept-Encoding: gzip, br\r\nUser-Agent: test/1.0\r\n\r\n"

    @Test func aPollIsReadWholeWithTheFieldsTheFastPathReads() throws {
        guard case .request(let length, let target, let fields) = Self.scan(Self.poll) else {
            Issue.record("not read")
            return
        }
        #expect(length == Self.poll.utf8.count && target == "/api/rooms")
        #expect(fields.host == "quad.test" && fields.authorization == "Bearer abc" && fields.ifNoneMatch == "\"e1\"")
        #expect(fields.cookie == "a=1; quad_session=x" && fields.acceptEncoding == "gzip, br")
        try Self.expectTheDecoderAgrees(Self.poll)
    }

    /// Each of these is the decoder's: it frames, refuses or keeps the connection otherwise, or reads it in a way
    /// the scanner does not.
    @Test(arguments: [
        "POST /api/rooms HTTP/1.1\r\nHost: q\r\n\r\n",
        "HEAD /api/rooms HTTP/1.1\r\nHost: q\r\n\r\n",
        "get /api/rooms HTTP/1.1\r\nHost: q\r\n\r\n",
        "GET /api/rooms HTTP/1.0\r\nHost: q\r\n\r\n",
        "GET http://q/api/rooms HTTP/1.1\r\nHost: q\r\n\r\n",
        "GET  /api/rooms HTTP/1.1\r\nHost: q\r\n\r\n",
        "\r\nGET /api/rooms HTTP/1.1\r\nHost: q\r\n\r\n",
        "GET /api/rooms HTTP/1.1\nHost: q\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nHost: q\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nHost: q\r\n\n",
        "GET /api/rooms HTTP/1.1\r\nHost: q\r\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nHost : q\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\n Host: q\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nHost: q\r\n folded\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nHost: q\u{7F}\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nHost: q\u{0}x\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nHost: caf\u{E9}\r\n\r\n",
        "GET /api/r\u{E9}s HTTP/1.1\r\nHost: q\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\n: q\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nContent-Length: 5\r\n\r\nGET /",
        "GET /api/rooms HTTP/1.1\r\ncontent-length: 0\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nConnection: close\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nConnection: keep-alive\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nUpgrade: websocket\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
    ])
    func theRestIsTheDecoders(request: String) {
        #expect(Self.scan(request) == .other, "\(request.debugDescription)")
    }

    /// A head cut anywhere before its end may be read once the rest arrives; past the limit, it is the decoder's.
    @Test func aHeadNotYetWholeIsWaitedForUpToTheLimit() {
        let bytes = Array(Self.poll.utf8)
        for cut in 0..<bytes.count {
            let scanned = bytes[..<cut].withUnsafeBytes { RequestScanner.scan($0, maxHead: 8192, maxFields: 64) }
            #expect(scanned == .incomplete, "cut at \(cut)")
        }
        let large = "GET /api/rooms HTTP/1.1\r\nCookie: " + String(repeating: "x", count: 9000)
        #expect(Self.scan(large) == .other)
        #expect(Self.scan(Self.poll, maxHead: Self.poll.utf8.count - 1) == .other)
        #expect(Self.scan(Self.poll, maxFields: 6) == .other)
        #expect(Self.scan(Self.poll, maxFields: 7) != .other)
    }

    /// Spaces and tabs before a value are not part of it, those after it are (as llhttp reads them), for the scanner as
    /// for the decoder; an empty value is one.
    @Test(arguments: [
        "GET /api/rooms HTTP/1.1\r\nIf-None-Match:\"e1\"\r\nHost: \t q \t\r\n\r\n",
        "GET /api/rooms HTTP/1.1\r\nHost:\r\nCookie: a = b ; c\r\n\r\n",
        "GET /api/rooms?x=1&y=%20 HTTP/1.1\r\nx-forwarded-for: 10.0.0.1, 10.0.0.2\r\nHOST: Q\r\n\r\n",
        "GET / HTTP/1.1\r\n\r\n",
    ])
    func whatItReadsTheDecoderReadsAlike(request: String) throws {
        #expect(Self.scan(request) != .other)
        try Self.expectTheDecoderAgrees(request)
    }

    /// Requests changed at random (bytes put in, dropped or doubled, from those that matter to HTTP's grammar): every
    /// one the scanner reads, the decoder reads the same way and ends at the same byte.
    @Test func whatItReadsOfRequestsChangedAtRandomTheDecoderReadsAlike() throws {
        var random = Seeded(state: 41)
        let alphabet: [UInt8] = Array(" \t\r\n:;,=\"/?%-_aZ09".utf8) + [0, 0x7F, 0x80, 0xE9, 0xFF]
        var read = 0
        var left = 0
        for _ in 0..<3000 {
            var bytes = Array(Self.poll.utf8)
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: at)
                case 1: bytes.remove(at: at)
                default: bytes.insert(bytes[at], at: at)
                }
            }
            let scanned = bytes.withUnsafeBytes { RequestScanner.scan($0, maxHead: 8192, maxFields: 64) }
            if case .request = scanned {
                read += 1
                try Self.expectTheDecoderAgrees(bytes)
            } else {
                left += 1
            }
        }
        // Both kinds were tried: the property was put to the test.
        #expect(read > 300 && left > 300, "read \(read), left \(left)")
    }

    /// A head that comes in pieces is held until it is whole; a request the fast path does not answer (here none
    /// is kept) is handed to the decoder whole, with everything after it, and the scanner leaves the connection.
    @Test func aRequestInPiecesIsHeldThenHandedToTheDecoderWhole() throws {
        let channel = try Self.pipeline()
        defer { _ = try? channel.finish() }

        try channel.writeInbound(ByteBuffer(string: "GET /api/rooms HTTP/1.1\r\nHo"))
        try channel.writeInbound(ByteBuffer(string: "st: q\r\nIf-None-Match: \"e"))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil, "nothing handed on yet")
        try channel.writeInbound(ByteBuffer(string: "1\"\r\n\r\nGET /b HTTP/1.1\r\n\r\n"))
        guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(
            head.uri == "/api/rooms" && head.headers["host"] == ["q"] && head.headers["if-none-match"] == ["\"e1\""])
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == .end(nil))
        guard case .head(let next) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no second head")
            return
        }
        #expect(next.uri == "/b")
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.handler(type: RequestScanner.self) }
    }

    /// A head that comes in more pieces than `mostPieces` is the decoder's (which reads as it comes, where the scanner
    /// reads a held head again from its start).
    @Test func aHeadInManyPiecesIsTheDecoders() throws {
        let channel = try Self.pipeline()
        defer { _ = try? channel.finish() }
        let head = Array(Self.poll.utf8)
        for piece in 0..<RequestScanner.mostPieces {
            #expect((try? channel.pipeline.syncOperations.handler(type: RequestScanner.self)) != nil, "piece \(piece)")
            try channel.writeInbound(ByteBuffer(bytes: head[piece..<piece + 1]))
        }
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.handler(type: RequestScanner.self) }
        try channel.writeInbound(ByteBuffer(bytes: head[RequestScanner.mostPieces...]))
        guard case .head(let read) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        guard case .request(_, _, let fields) = Self.scan(Self.poll) else { return }
        #expect(read.uri == "/api/rooms" && FastPathFields(read.headers) == fields)
    }

    /// The scanner, the decoder and a fast path with no kept answer (it answers nothing), as a connection has them:
    /// what reaches the end of the pipeline is what the router would be handed.
    static func pipeline() throws -> EmbeddedChannel {
        let routes = FastPath.Routes(
            kept: [:], trustedProxies: [], rateLimiter: nil, logger: Logger(label: "test"), clock: SystemClock(),
            sessionKey: { $0 }, session: { _ in nil }, pages: nil, streams: nil, operations: [:])
        let fastPath = FastPath(routes: routes, deadlines: nil)
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(
            RequestScanner(fastPath: fastPath, limits: .init()), ByteToMessageHandler(HTTPRequestDecoder()), fastPath)
        return channel
    }

    static func scan(_ request: String, maxHead: Int = 8192, maxFields: Int = 64) -> RequestScanner.Scanned {
        Array(request.utf8).withUnsafeBytes { RequestScanner.scan($0, maxHead: maxHead, maxFields: maxFields) }
    }

    static func expectTheDecoderAgrees(_ request: String) throws {
        try expectTheDecoderAgrees(Array(request.utf8))
    }

    /// The decoder, given the request and another after it, reads the same head, no body, then the other request.
    static func expectTheDecoderAgrees(_ bytes: [UInt8]) throws {
        guard
            case .request(let length, let target, let fields) = bytes.withUnsafeBytes({
                RequestScanner.scan($0, maxHead: 8192, maxFields: 64)
            })
        else {
            Issue.record("not read: \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            return
        }
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        defer { _ = try? channel.finish() }
        var buffer = ByteBuffer(bytes: bytes[..<length])
        buffer.writeString("GET /next HTTP/1.1\r\nHost: n\r\n\r\n")
        try channel.writeInbound(buffer)
        let described = String(decoding: bytes[..<length], as: UTF8.self).debugDescription
        guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("the decoder read no head: \(described)")
            return
        }
        #expect(
            head.method == .GET && head.uri == target && head.version == .http1_1 && head.isKeepAlive, "\(described)")
        #expect(FastPathFields(head.headers) == fields, "\(described)")
        guard case .end = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("the decoder read a body: \(described)")
            return
        }
        guard case .head(let next) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("the decoder read no next request: \(described)")
            return
        }
        #expect(next.uri == "/next", "\(described)")
    }
}

/// A seeded generator (Knuth's MMIX linear congruential one, its high bits): the same requests each run.
struct Seeded {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 33
    }
}
