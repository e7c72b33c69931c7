import Hummingbird
import Logging
import Synchronization

/// The one line a request writes at `info`: its method, its path without the query, its status, the milliseconds it
/// took (`ms`) and its id (`request`, which the answer carries as `X-Request-Id`); `answer=kept` or `page=kept` where
/// the fast path answered from what it keeps. Never headers or query strings, which can carry credentials. The router
/// (`RequestLogMiddleware`) and the fast path (`FastPath`) write it alike.
///
/// Quad's own text log gets the line put together in bytes (`TextLogHandler.logRequest`): through swift-log (a
/// metadata dictionary, sorted, then a string built piece by piece) it cost a signed-in poll answered by the fast
/// path about 1.9 µs of its 26 (perf of `rooms-304-cookie` as shipped, issue 41). Any other handler (JSON lines, a
/// test's) gets it through the logger, with the same fields. A class: a struct holding a logger was copied at each
/// line (its handler retained and released, 0.3 % of a kept answer's time, perf of `rooms-304-bearer`).
package final class RequestLog: Sendable {
    let logger: Logger
    /// The server's text log, when the logger is it, with nothing of its own to add to a line.
    private let text: TextLogHandler?

    package init(logger: Logger) {
        self.logger = logger
        let handler = logger.handler as? TextLogHandler
        text = handler?.metadata.isEmpty == true && logger.metadataProvider == nil ? handler : nil
    }

    /// Whether request lines are written (the level is `info` or finer): when not, no answer needs an id either.
    package var isOn: Bool { logger.logLevel <= .info }

    /// Writes the line of a request answered with `status` after `elapsed`, if the level says so; `kept`: what the
    /// fast path answered from memory (`answer` or `page`).
    package func write(
        method: String, path: some StringProtocol, status: UInt, elapsed: Duration, id: some RequestLineID,
        kept: String? = nil
    ) {
        guard isOn else { return }
        if let text {
            text.logRequest(
                method: method, path: path, status: status, tenths: Self.tenths(elapsed), id: id, kept: kept)
            return
        }
        var metadata: Logger.Metadata = ["request": .string(id.text), "ms": .string(Self.milliseconds(elapsed))]
        if let kept { metadata[kept] = "kept" }
        logger.info("\(method) \(path) \(status)", metadata: metadata)
    }

    /// "1.2": milliseconds to the tenth, rounded half up (1 ms is 10^15 attoseconds), without `String(format:)`.
    static func milliseconds(_ elapsed: Duration) -> String {
        let tenths = tenths(elapsed)
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Tenths of a millisecond, rounded half up (never below 0).
    static func tenths(_ elapsed: Duration) -> Int64 {
        max(
            0,
            elapsed.components.seconds * 10_000 + (elapsed.components.attoseconds + 50_000_000_000_000)
                / 100_000_000_000_000)
    }
}

/// A request line's id: the router's (a `String`, Hummingbird's `RequestID`) or the fast path's (`AnswerID`), written
/// where the line is put together.
package protocol RequestLineID {
    var text: String { get }
    var utf8Count: Int { get }
    /// Writes the id at the start of `buffer`; how many bytes (`utf8Count`).
    func write(to buffer: UnsafeMutableBufferPointer<UInt8>) -> Int
}

extension String: RequestLineID {
    package var text: String { self }
    package var utf8Count: Int { utf8.count }
    package func write(to buffer: UnsafeMutableBufferPointer<UInt8>) -> Int { buffer.initialize(utf8: self) }
}

/// The id of an answer the fast path gives, in the form of the router's (Hummingbird's `RequestID`: its random prefix,
/// then a count in 16 hex digits), written as bytes into the answer and its log line, with no string made between
/// (`RequestID().description` makes three allocations, and cost a kept answer 1.6 % of its time, perf of
/// `rooms-304-bearer`; a string of its own, about 0.8 %). The count is this process's own, from a random start as
/// Hummingbird's is; two counts of 2^64 that start apart at random do not meet in a server's life.
package struct AnswerID: RequestLineID {
    private static let prefix = Array(RequestID().description.utf8.dropLast(16))
    private static let count = Atomic<UInt64>(UInt64.random(in: .min ... .max))
    private let value: UInt64

    static func next() -> AnswerID {
        AnswerID(value: count.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    /// How many bytes every id takes.
    static let length = prefix.count + 16

    package var utf8Count: Int { Self.length }

    package var text: String {
        String(unsafeUninitializedCapacity: utf8Count) { write(to: $0) }
    }

    package func write(to buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let start = buffer.initialize(fromContentsOf: Self.prefix)
        let rest = UnsafeMutableBufferPointer(rebasing: buffer[start...])
        return start + withUnsafeBytes(of: value.bigEndian) { $0.writeHex(to: rest) }
    }
}
