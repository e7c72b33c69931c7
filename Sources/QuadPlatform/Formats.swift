import Crypto
import Foundation

extension Sequence<UInt8> {
    /// Lowercase hex, two digits a byte (digests, ids). `String(format:)` costs tens of µs a call. Inlinable, so that
    /// it is specialized where it is called: a session's token is hashed and written in hex on every signed-in
    /// request, and the generic version cost about 1.5 µs of the fast path's 30 (measured with `perf`). Bytes already
    /// in one piece are read where they are (a digest copied into an array first cost a signed-in poll 0.6 % of its
    /// time, perf of `rooms-304-cookie`).
    @inlinable package var hex: String {
        if let hex = withContiguousStorageIfAvailable({ UnsafeRawBufferPointer($0).hexDigits }) { return hex }
        return Array(self).withUnsafeBytes { $0.hexDigits }
    }
}

extension Digest {
    /// Lowercase hex, read where the digest is: a digest is a `Sequence` without contiguous storage, and was copied
    /// into an array first.
    @inlinable package var hex: String { withUnsafeBytes { $0.hexDigits } }
}

extension UnsafeRawBufferPointer {
    @inlinable package var hexDigits: String {
        String(unsafeUninitializedCapacity: count * 2) { writeHex(to: $0) }
    }

    /// These bytes in hex at the start of `buffer` (an id written where it is sent); how many digits.
    @inlinable package func writeHex(to buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let digits: StaticString = "0123456789abcdef"
        let table = digits.utf8Start
        for (index, byte) in enumerated() {
            buffer[2 * index] = table[Int(byte >> 4)]
            buffer[2 * index + 1] = table[Int(byte & 0x0F)]
        }
        return count * 2
    }
}

extension UnsafeMutableBufferPointer<UInt8> {
    /// Copies `text`'s UTF-8 bytes to the start of this buffer, which has room for them; how many (a log line or an
    /// answer's head put together where it is written).
    package func initialize(utf8 text: some StringProtocol) -> Int {
        if let copied = text.utf8.withContiguousStorageIfAvailable({ initialize(fromContentsOf: $0) }) {
            return copied
        }
        var end = 0
        for byte in text.utf8 {
            self[end] = byte
            end += 1
        }
        return end
    }
}

/// Timestamps as stored and sent: ISO 8601 in UTC, e.g. `2026-11-22T01:54:02Z`. A format style is a
/// cheap value; a new `ISO8601DateFormatter` costs about 100 µs.
package enum Timestamp {
    package static func string(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    package static func date(_ text: String) -> Date? {
        try? Date(text, strategy: .iso8601)
    }
}
