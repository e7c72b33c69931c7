import HummingbirdCore
import NIOCore
import NIOHTTP1

/// Reads the plainest requests on a connection ahead of NIO's HTTP/1 decoder, for the fast path to answer from its
/// kept answers; at the first request it does not read, or that the fast path does not answer, the connection is the
/// decoder's, from that request's first byte, for good.
///
/// Why: measured with `Benchmarks/floor` (issue 41), a SwiftNIO server that writes Quad's kept 304 for every request
/// spent 8.0 µs of CPU a request with NIO's decoder and 6.0 µs finding requests by their blank line, against Quad's
/// 15.3 µs: the decoder (llhttp, its callbacks, a `String` for each field's name and value, an `HTTPHeaders`, a part
/// for the head and one for the end) is an eighth of a kept poll's cost, and the kept polls were at 0.71x nginx's
/// requests/s where the issue asks for 0.8x.
///
/// What it reads is a strict subset of HTTP/1.1 that the decoder reads the same way (RFC 9112): `GET`, an origin-form
/// target of visible ASCII, `HTTP/1.1`, then field lines of a token name, a colon and a value of visible ASCII,
/// spaces and tabs, each ended by CRLF, then CRLF; none of `Content-Length`, `Transfer-Encoding`, `Connection`,
/// `Upgrade` or `Expect`; within the decoder's limits. Such a request is kept alive and has no body (§6.3): it ends
/// at its blank line for both readers. Anything else (another method or version, a bare LF, a folded line, a byte
/// outside those, a field that frames a body or changes the connection, a head too large) is the decoder's, so what
/// the decoder answers, refuses or frames is unchanged, and no byte is read by both: a request the scanner left is
/// handed on whole, and nothing after it is scanned. The fast path answers what it read only as it would answer the
/// same request from the decoder (`FastPath.answerScanned`); else the decoder reads it.
final class RequestScanner: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let fastPath: FastPath
    /// The largest head read here, and its most field lines: the decoder's limits, or less.
    private let maxHead: Int
    private let maxFields: Int
    private var fastPathContext: ChannelHandlerContext?
    /// The start of a request whose head has not all arrived, and in how many reads it came.
    private var pending: ByteBuffer?
    private var pieces = 0

    init(fastPath: FastPath, limits: HTTP1Channel.Configuration.DecoderConfiguration) {
        self.fastPath = fastPath
        maxHead = min(Self.largestHead, limits.maxHeaderFieldSize, limits.maxHeaderListSize)
        maxFields = min(Self.mostFields, limits.maxHeaderFieldCount)
    }

    /// A poll's head is a few hundred bytes (a browser's, with its cookies, a kilobyte or two).
    static let largestHead = 8192
    static let mostFields = 64
    /// A head is read again from its start as each piece of it comes (a client sends one in a packet or two): past
    /// this many pieces, the decoder, which reads as it comes, has it (a head sent a byte at a time would otherwise
    /// be read 8,192 times over).
    static let mostPieces = 4

    func handlerAdded(context: ChannelHandlerContext) {
        fastPathContext = try? context.pipeline.syncOperations.context(handler: fastPath)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var held = pending {
            pending = nil
            held.writeBuffer(&bytes)
            bytes = held
            pieces += 1
            if pieces >= Self.mostPieces { return decodeFromNowOn(bytes, context: context) }
        }
        while bytes.readableBytes > 0 {
            switch bytes.withUnsafeReadableBytes({ Self.scan($0, maxHead: maxHead, maxFields: maxFields) }) {
            case .request(let length, let target, let fields):
                guard let fastPathContext, fastPath.answerScanned(target, fields, context: fastPathContext) else {
                    return decodeFromNowOn(bytes, context: context)
                }
                bytes.moveReaderIndex(forwardBy: length)
                pieces = 0
            case .incomplete:
                // A copy of its own, of what it holds: the read's buffer goes back to NIO's pool.
                var held = context.channel.allocator.buffer(capacity: bytes.readableBytes)
                held.writeImmutableBuffer(bytes)
                pending = held
                pieces = max(pieces, 1)
                return
            case .other:
                return decodeFromNowOn(bytes, context: context)
            }
        }
    }

    /// The decoder reads the connection from here on: this handler goes.
    private func decodeFromNowOn(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        // Handed on first: a handler removed passes nothing on.
        context.fireChannelRead(wrapInboundOut(bytes))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Removed with part of a head held (the connection closing): nothing to answer, nothing to pass on.
        pending = nil
        fastPathContext = nil
    }

    enum Scanned: Equatable {
        /// A request read whole, in `length` bytes.
        case request(length: Int, target: String, fields: FastPathFields)
        /// The start of one that may be read here once the rest arrives.
        case incomplete
        /// The decoder's.
        case other
    }

    /// The request at the start of `bytes`.
    static func scan(_ bytes: UnsafeRawBufferPointer, maxHead: Int, maxFields: Int) -> Scanned {
        var reader = Reader(bytes: bytes, end: min(bytes.count, maxHead))
        // Past the limit, what is missing would make it too large to read here.
        let more: Scanned = bytes.count < maxHead ? .incomplete : .other
        switch reader.expect("GET /") {
        case .matched: break
        case .short: return more
        case .differs: return .other
        }
        let targetStart = reader.index - 1
        while true {
            guard let byte = reader.next() else { return more }
            if byte == UInt8(ascii: " ") { break }
            guard Self.isVisible(byte) else { return .other }
        }
        let target = String(
            decoding: UnsafeRawBufferPointer(rebasing: bytes[targetStart..<reader.index - 1]), as: UTF8.self)
        switch reader.expect("HTTP/1.1\r\n") {
        case .matched: break
        case .short: return more
        case .differs: return .other
        }
        var fields = FastPathFields()
        var count = 0
        while true {
            // The blank line that ends the head, or a field line.
            guard let first = reader.next() else { return more }
            if first == UInt8(ascii: "\r") {
                guard let second = reader.next() else { return more }
                return second == UInt8(ascii: "\n")
                    ? .request(length: reader.index, target: target, fields: fields) : .other
            }
            guard Self.isToken(first) else { return .other }  // a folded line, a bare LF, a space before the name
            count += 1
            guard count <= maxFields else { return .other }
            let nameStart = reader.index - 1
            while true {
                guard let byte = reader.next() else { return more }
                if byte == UInt8(ascii: ":") { break }
                guard Self.isToken(byte) else { return .other }
            }
            let name = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<reader.index - 1])
            guard !Self.framesOrChangesTheConnection(name) else { return .other }
            var valueStart = reader.index
            while true {
                guard let byte = reader.next() else { return more }
                if byte == UInt8(ascii: "\r") { break }
                guard Self.isVisible(byte) || Self.isSpace(byte) else { return .other }
            }
            let valueEnd = reader.index - 1
            guard let lf = reader.next() else { return more }
            guard lf == UInt8(ascii: "\n") else { return .other }
            // Without the spaces and tabs before it, and with those after it, as the decoder gives it (llhttp).
            while valueStart < valueEnd, Self.isSpace(bytes[valueStart]) { valueStart += 1 }
            fields.add(
                name, String(decoding: UnsafeRawBufferPointer(rebasing: bytes[valueStart..<valueEnd]), as: UTF8.self))
        }
    }

    /// The fields that give a request a body or change what becomes of the connection.
    private static func framesOrChangesTheConnection(_ name: UnsafeRawBufferPointer) -> Bool {
        switch name.count {
        case 6: FastPathFields.named(name, "expect")
        case 7: FastPathFields.named(name, "upgrade")
        case 10: FastPathFields.named(name, "connection")
        case 14: FastPathFields.named(name, "content-length")
        case 17: FastPathFields.named(name, "transfer-encoding")
        default: false
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// VCHAR: `!` to `~`.
    private static func isVisible(_ byte: UInt8) -> Bool { byte > 32 && byte < 127 }

    /// tchar (RFC 9110 §5.6.2).
    private static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// The bytes read so far, up to `end`.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let end: Int
        var index = 0

        enum Expected { case matched, short, differs }

        mutating func next() -> UInt8? {
            guard index < end else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func expect(_ text: StaticString) -> Expected {
            text.withUTF8Buffer { expected in
                for byte in expected {
                    guard let read = next() else { return .short }
                    if read != byte { return .differs }
                }
                return .matched
            }
        }
    }
}
