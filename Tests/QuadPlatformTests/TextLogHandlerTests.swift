import Foundation
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
        #expect(RequestLogMiddleware.milliseconds(.microseconds(40)) == "0.0")
        #expect(RequestLogMiddleware.milliseconds(.microseconds(50)) == "0.1")
        #expect(RequestLogMiddleware.milliseconds(.microseconds(1249)) == "1.2")
        #expect(RequestLogMiddleware.milliseconds(.microseconds(1250)) == "1.3")
        #expect(RequestLogMiddleware.milliseconds(.milliseconds(2_000_017)) == "2000017.0")
    }
}
