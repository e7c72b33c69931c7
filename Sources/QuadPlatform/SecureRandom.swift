import Foundation
import QuadCore

package enum SecureRandom {
    /// An id people pass to the command line (`quad leave <id>`, `quad cancel <id>`): random as `base64url`, but
    /// never starting with `-`, which a command line reads as an option.
    package static func identifier(byteCount: Int) -> String {
        while true {
            let id = base64url(byteCount: byteCount)
            if !id.hasPrefix("-") { return id }
        }
    }

    /// `byteCount` random bytes from the system's secure generator, base64url without padding.
    ///
    /// Eight bytes are asked of the generator at a time: each ask is a call into the kernel (measured with
    /// `Benchmarks/run booking-storm`: a byte at a time, a booking's id took 2.5 % of the storm's CPU).
    package static func base64url(byteCount: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount + 7)
        while bytes.count < byteCount {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return Data(bytes.prefix(byteCount)).base64URLEncoded
    }
}
