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
    private let stamp = Stamp()

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
        let second = Stamp.second()
        writer.append(most: Stamp.most + line.utf8.count, urgent: event.level >= .warning) { room in
            let buffer = room.bindMemory(to: UInt8.self)
            var end = stamp.write(second, to: buffer)
            end += UnsafeMutableBufferPointer(rebasing: buffer[end...]).initialize(utf8: line)
            return end
        }
    }

    /// A request's line (`RequestLog`), as `log` writes it with the same fields, put together in bytes where it waits
    /// to be written (`LogWriter.append(most:)`): no dictionary, no sorting, no allocation, no copy. `kept`: the key
    /// that says what the fast path kept (`answer` or `page`), before or after `ms` as it sorts; `tenths`: the
    /// milliseconds it took, in tenths.
    func logRequest(
        method: String, path: some StringProtocol, status: UInt, tenths: Int64, id: some RequestLineID, kept: String?
    ) {
        let second = Stamp.second()
        let most =
            Stamp.most + label.utf8.count + method.utf8.count + path.utf8.count + id.utf8Count
            + (kept?.utf8.count ?? 0) + 96
        writer.append(most: most) { room in
            let buffer = room.bindMemory(to: UInt8.self)
            var end = stamp.write(second, to: buffer)
            func add(_ text: some StringProtocol) {
                end += UnsafeMutableBufferPointer(rebasing: buffer[end...]).initialize(utf8: text)
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
            end += id.write(to: UnsafeMutableBufferPointer(rebasing: buffer[end...]))
            add(" [QuadPlatform] ")
            add(method)
            add(" ")
            add(path)
            add(" ")
            add(status)
            add("\n")
            return end
        }
    }

    /// The handler's time stamp, local time to the second as `StreamLogHandler` writes it
    /// (`2026-11-24T16:00:00+0000`): the real time, as JSON lines have it, whatever clock the server runs on. Made
    /// once a second (strftime and a time zone lookup); read and made only where a line is put together, under its
    /// writer's lock, which guards it (a lock of its own cost a request's line a third of its time).
    final class Stamp: @unchecked Sendable {
        /// The most bytes a stamp takes.
        static let most = 32
        private var second = -1
        private var text: [UInt8] = []

        /// This second, to be stamped on a line.
        static func second() -> Int {
            Int(SystemClock().now.timeIntervalSince1970)
        }

        /// Writes the stamp of `second` at the start of `buffer`; how many bytes.
        func write(_ second: Int, to buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
            if second != self.second {
                var now = time_t(second)
                var local = tm()
                localtime_r(&now, &local)
                var made = [Int8](repeating: 0, count: Self.most)
                let length = strftime(&made, made.count, "%Y-%m-%dT%H:%M:%S%z", &local)
                text = made[0..<length].map { UInt8(bitPattern: $0) }
                self.second = second
            }
            return buffer.initialize(fromContentsOf: text)
        }
    }
}
