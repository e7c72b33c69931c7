import Foundation
import Logging
import NIOConcurrencyHelpers
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
        self.init(label: label, writer: .standardError)
    }

    init(label: String, writer: LogWriter) {
        self.label = label
        self.writer = writer
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // A line per request: no dictionary merged unless the logger carries metadata of its own (the router's request
        // line does not), and the line built in one string.
        var fields = event.metadata ?? [:]
        if !metadata.isEmpty { fields = metadata.merging(fields) { _, new in new } }
        if let error = event.error {
            fields["error.message"] = "\(error)"
            fields["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var line = ""
        line.reserveCapacity(192)
        line += Self.timestamp()
        line += " "
        line += event.level.rawValue
        line += " "
        line += label
        line += ":"
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            line += " "
            line += key
            line += "="
            line += value.description
        }
        line += " ["
        line += event.source
        line += "] "
        line += event.message.description
        line += "\n"
        writer.append(line.utf8, urgent: event.level >= .warning)
    }

    /// A request's line (`RequestLog`), as `log` writes it with the same fields, put together in bytes on the stack:
    /// no dictionary, no sorting, no allocation. `kept`: the key that says what the fast path kept (`answer` or
    /// `page`), before or after `ms` as it sorts; `tenths`: the milliseconds it took, in tenths.
    func logRequest(
        method: String, path: some StringProtocol, status: UInt, tenths: Int64, id: String, kept: String?
    ) {
        let stamp = Self.timestamp()
        let most =
            stamp.utf8.count + label.utf8.count + method.utf8.count + path.utf8.count + id.utf8.count
            + (kept?.utf8.count ?? 0) + 96
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: most) { buffer in
            var end = 0
            func add(_ text: some StringProtocol) {
                let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
                    UnsafeMutableBufferPointer(rebasing: buffer[end...]).initialize(fromContentsOf: bytes)
                }
                if let copied {
                    end += copied
                } else {
                    for byte in text.utf8 {
                        buffer[end] = byte
                        end += 1
                    }
                }
            }
            func add(_ number: some BinaryInteger) {
                var digits = 1
                var probe = number / 10
                while probe > 0 {
                    digits += 1
                    probe /= 10
                }
                var rest = number
                for index in (0..<digits).reversed() {
                    buffer[end + index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                end += digits
            }
            func keptField() {
                guard let kept else { return }
                add(" ")
                add(kept)
                add("=kept")
            }
            add(stamp)
            add(" info ")
            add(label)
            add(":")
            if let kept, kept < "ms" { keptField() }
            add(" ms=")
            add(tenths / 10)
            add(".")
            add(tenths % 10)
            if let kept, kept >= "ms" { keptField() }
            add(" request=")
            add(id)
            add(" [QuadPlatform] ")
            add(method)
            add(" ")
            add(path)
            add(" ")
            add(status)
            add("\n")
            writer.append(UnsafeBufferPointer(rebasing: buffer[..<end]))
        }
    }

    /// The last second written, for the lines within it (a request line's strftime and time zone lookup, once a
    /// second).
    private static let lastStamp = NIOLockedValueBox<(second: Int, text: String)>((-1, ""))

    /// Local time to the second, as `StreamLogHandler` writes it (`2026-11-24T16:00:00+0000`); the real time, as
    /// JSON lines have it, whatever clock the server runs on.
    static func timestamp() -> String {
        let second = Int(SystemClock().now.timeIntervalSince1970.rounded(.down))
        if let text = lastStamp.withLockedValue({ $0.second == second ? $0.text : nil }) { return text }
        var now = time_t(second)
        var local = tm()
        localtime_r(&now, &local)
        var buffer = [Int8](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        let text = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        lastStamp.withLockedValue { $0 = (second, text) }
        return text
    }
}
