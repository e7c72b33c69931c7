import Foundation

extension Sequence<UInt8> {
    /// Lowercase hex, two digits a byte (digests, ids). `String(format:)` costs tens of µs a call.
    package var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var result = [UInt8]()
        for byte in self {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: result, as: UTF8.self)
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
