import Crypto
import Foundation

/// Who may read `/metrics`: the addresses `QUAD_METRICS_FROM` names (as the socket, or a trusted proxy, reports
/// them), or whoever sends `Authorization: Bearer` with `QUAD_METRICS_TOKEN`. With neither set, no one.
package struct MetricsAccess: Sendable {
    var addresses: Set<String> = []
    /// The token's SHA-256: compared digest to digest, so the comparison's time tells nothing of the token.
    var tokenHash: [UInt8]?

    init(addresses: Set<String> = [], token: String? = nil) {
        self.addresses = addresses
        self.tokenHash = token.map { Array(SHA256.hash(data: Data($0.utf8))) }
    }

    func allows(address: String, authorization: String?) -> Bool {
        if addresses.contains(address) { return true }
        guard let tokenHash, let authorization, authorization.hasPrefix("Bearer ") else { return false }
        let given = Array(SHA256.hash(data: Data(authorization.dropFirst("Bearer ".count).utf8)))
        return zip(given, tokenHash).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
