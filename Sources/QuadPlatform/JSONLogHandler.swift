import Foundation
import Logging
import NIOConcurrencyHelpers
import QuadCore

/// `QUAD_LOG_FORMAT=json`: one JSON object per line on stdout, for a machine to read (journald, Loki, Elastic):
/// `time` (ISO 8601, UTC, milliseconds), `level`, `label`, `message`, `source`, and each metadata key as a field of
/// its own (a request's `request` id, which its answer also carries as `X-Request-Id`, and `ms`). No JSON handler is
/// among the packages here: this one is small. Lines are written whole, off the request's path (`LogWriter`).
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    let label: String
    public init(label: String) {
        self.label = label
        LogWriter.standardOutput.sayDrops { count in
            Self.line([
                "time": Self.time(SystemClock().now), "level": "warning", "label": "quad",
                "message": "Quad dropped \(count) log lines: the log was not read fast enough.", "dropped": count,
            ]) ?? []
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields: [String: Any] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { _, new in new }) {
            fields[key] = Self.json(value)
        }
        fields["time"] = Self.time(SystemClock().now)
        fields["level"] = event.level.rawValue
        fields["label"] = label
        fields["message"] = event.message.description
        fields["source"] = event.source
        guard let line = Self.line(fields) else { return }
        LogWriter.standardOutput.append(line, urgent: event.level >= .warning)
    }

    /// One object and a line feed.
    static func line(_ fields: [String: Any]) -> [UInt8]? {
        guard
            let object = try? JSONSerialization.data(
                withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return Array(object) + [UInt8(ascii: "\n")]
    }

    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(json)
        case .dictionary(let values): values.mapValues(json)
        }
    }

    static func time(_ date: Date) -> String {
        date.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
