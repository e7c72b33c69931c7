import Foundation
import Hummingbird
import Logging
import Testing

@testable import QuadPlatform

/// Text lines are written as swift-log's `StreamLogHandler` writes them (time, level, label, metadata sorted by key,
/// source, message), and the request line's duration reads in milliseconds to the tenth.
@Suite struct TextLogHandlerTests {
    @Test func aLineIsWrittenAsStreamLogHandlerWritesIt() throws {
        let pipe = try LogWriterTests.Pipe()
        let writer = LogWriter(fileDescriptor: pipe.write, capacity: 1 << 20)
        var logger = Logger(label: "quad") { TextLogHandler(label: $0, writer: writer) }
        logger.info("GET /rooms 200", metadata: ["request": "abc", "ms": "1.2"])
        logger[metadataKey: "instance"] = "one"
        logger.warning("late", metadata: ["ms": "3.0"])
        logger.debug("not written")
        writer.flush()
        let lines = pipe.drain().split(separator: "\n", omittingEmptySubsequences: false)
        let stamp = #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}"#
        try #require(lines.count == 3 && lines[2].isEmpty, "\(lines)")
        #expect(
            lines[0].wholeMatch(
                of: try Regex(stamp + #" info quad: ms=1\.2 request=abc \[QuadPlatformTests\] GET /rooms 200"#))
                != nil, "\(lines[0])")
        #expect(
            lines[1].wholeMatch(
                of: try Regex(stamp + #" warning quad: instance=one ms=3\.0 \[QuadPlatformTests\] late"#))
                != nil, "\(lines[1])")
    }

    @Test func theDurationIsInMillisecondsToTheTenth() {
        #expect(RequestLog.milliseconds(.microseconds(40)) == "0.0")
        #expect(RequestLog.milliseconds(.microseconds(50)) == "0.1")
        #expect(RequestLog.milliseconds(.microseconds(1249)) == "1.2")
        #expect(RequestLog.milliseconds(.microseconds(1250)) == "1.3")
        #expect(RequestLog.milliseconds(.milliseconds(2_000_017)) == "2000017.0")
    }

    /// A request's line, put together in bytes for the text log, reads as the same line written through swift-log:
    /// the router's (method, path, status, `ms`, `request`), and the fast path's with what it kept, in key order.
    @Test func aRequestLineReadsAsTheLoggersLine() throws {
        let pipe = try LogWriterTests.Pipe()
        let writer = LogWriter(fileDescriptor: pipe.write, capacity: 1 << 20)
        let logger = Logger(label: "quad") { TextLogHandler(label: $0, writer: writer) }
        let log = RequestLog(logger: logger)
        let asked: [(path: String, status: UInt, kept: String?, took: Duration)] = [
            ("/rooms", 200, nil, .microseconds(1250)), ("/api/rooms", 304, "answer", .zero),
            ("/rooms/ljerka", 200, "page", .milliseconds(2_000_017)), ("/", 503, nil, .microseconds(99_960)),
        ]
        for (index, request) in asked.enumerated() {
            let id = "id\(index)"
            log.write(
                method: "GET", path: request.path, status: request.status, elapsed: request.took, id: id,
                kept: request.kept)
            var metadata: Logger.Metadata = [
                "request": .string(id), "ms": .string(RequestLog.milliseconds(request.took)),
            ]
            if let kept = request.kept { metadata[kept] = "kept" }
            // As the router's middleware and the fast path log it, from QuadPlatform.
            logger.info("GET \(request.path) \(request.status)", metadata: metadata, source: "QuadPlatform")
        }
        writer.flush()
        let lines = pipe.drain().split(separator: "\n").map { $0.drop { $0 != " " } }  // without the time
        try #require(lines.count == 8, "\(lines)")
        for pair in stride(from: 0, to: 8, by: 2) { #expect(lines[pair] == lines[pair + 1]) }
        #expect(lines[0] == " info quad: ms=1.3 request=id0 [QuadPlatform] GET /rooms 200")
        #expect(lines[2] == " info quad: answer=kept ms=0.0 request=id1 [QuadPlatform] GET /api/rooms 304")
        #expect(lines[4] == " info quad: ms=2000017.0 page=kept request=id2 [QuadPlatform] GET /rooms/ljerka 200")
        #expect(lines[6] == " info quad: ms=100.0 request=id3 [QuadPlatform] GET / 503")
    }

    /// Below `info`, no request line is written, and none is asked for (no answer carries an id).
    @Test func aQuietLogWritesNoRequestLine() throws {
        let pipe = try LogWriterTests.Pipe()
        let writer = LogWriter(fileDescriptor: pipe.write, capacity: 1 << 20)
        var logger = Logger(label: "quad") { TextLogHandler(label: $0, writer: writer) }
        logger.logLevel = .warning
        let log = RequestLog(logger: logger)
        #expect(!log.isOn)
        log.write(method: "GET", path: "/rooms", status: 200, elapsed: .zero, id: "x")
        logger.warning("late")
        writer.flush()
        let written = pipe.drain()
        #expect(written.contains("late") && !written.contains("GET /rooms"), "\(written)")
    }

    /// The fast path's answers get ids in the router's form (Hummingbird's prefix, then 16 hex digits), one each.
    @Test func anAnswerIdHasTheRoutersForm() throws {
        let router = RequestID().description
        let ids = (0..<3).map { _ in AnswerID.next().text }
        for id in ids {
            #expect(id.count == router.count && id.dropLast(16) == router.dropLast(16), "\(id) beside \(router)")
            #expect(id.suffix(16).allSatisfy { $0.isHexDigit && !$0.isUppercase })
        }
        let counts = try ids.map { try #require(UInt64($0.suffix(16), radix: 16)) }
        #expect(counts[1] &- counts[0] == 1 && counts[2] &- counts[1] == 1, "\(ids)")
    }
}
