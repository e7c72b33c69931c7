import Logging

/// The one line a request writes at `info`: its method, its path without the query, its status, the milliseconds it
/// took (`ms`) and its id (`request`, which the answer carries as `X-Request-Id`); `answer=kept` or `page=kept` where
/// the fast path answered from what it keeps. Never headers or query strings, which can carry credentials. The router
/// (`RequestLogMiddleware`) and the fast path (`FastPath`) write it alike.
///
/// Quad's own text log gets the line put together in bytes (`TextLogHandler.logRequest`): through swift-log (a
/// metadata dictionary, sorted, then a string built piece by piece) it cost a signed-in poll answered by the fast
/// path about 1.9 µs of its 26 (perf of `rooms-304-cookie` as shipped, issue 41). Any other handler (JSON lines, a
/// test's) gets it through the logger, with the same fields.
package struct RequestLog: Sendable {
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
        method: String, path: some StringProtocol, status: UInt, elapsed: Duration, id: String, kept: String? = nil
    ) {
        guard isOn else { return }
        let ms = Self.milliseconds(elapsed)
        if let text {
            text.logRequest(method: method, path: path, status: status, ms: ms, id: id, kept: kept)
            return
        }
        var metadata: Logger.Metadata = ["request": .string(id), "ms": .string(ms)]
        if let kept { metadata[kept] = "kept" }
        logger.info("\(method) \(path) \(status)", metadata: metadata)
    }

    /// "1.2": milliseconds to the tenth, rounded half up (1 ms is 10^15 attoseconds), without `String(format:)`.
    static func milliseconds(_ elapsed: Duration) -> String {
        let tenths =
            elapsed.components.seconds * 10_000 + (elapsed.components.attoseconds + 50_000_000_000_000)
            / 100_000_000_000_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}
