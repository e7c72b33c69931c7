import Foundation
import Logging
import QuadCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `QUAD_LOG_FORMAT=text` (the default): each line as swift-log's `StreamLogHandler` writes it
/// (`2026-11-24T16:00:00+0000 info quad: ms=1.2 request=… [QuadPlatform] GET /rooms 200`), written by `LogWriter`.
public struct TextLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    let label: String
    let writer: LogWriter

    public init(label: String) {
        self.label = label
        writer = .standardError
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if let error = event.error {
            fields["error.message"] = "\(error)"
            fields["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        let pretty =
            fields.isEmpty ? "" : " " + fields.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        let line = "\(Self.timestamp()) \(event.level) \(label):\(pretty) [\(event.source)] \(event.message)\n"
        writer.append(line.utf8, urgent: event.level >= .warning)
    }

    /// Local time to the second, as `StreamLogHandler` writes it (`2026-11-24T16:00:00+0000`); the real time, as
    /// JSON lines have it, whatever clock the server runs on.
    static func timestamp() -> String {
        var now = time_t(SystemClock().now.timeIntervalSince1970)
        var local = tm()
        localtime_r(&now, &local)
        var buffer = [Int8](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
