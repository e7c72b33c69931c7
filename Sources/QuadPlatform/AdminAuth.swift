import Crypto
import Foundation
import Hummingbird
import Logging
import SQLKit

/// The admin token for automation: `QUAD_ADMIN_TOKEN`, or one generated at the first start, printed once,
/// of which only the SHA-256 is stored. It acts as an API token of the `admin` account.
public final class AdminAuth: Sendable {
    private let tokenHash: [UInt8]

    package init(tokenHash: [UInt8]) {
        self.tokenHash = tokenHash
    }

    package static let migration = Migration(
        id: 2, name: "settings",
        statements: ["CREATE TABLE quad_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)"])

    static let settingKey = "admin_token_sha256"

    /// Uses the configured token, else the stored hash, else generates a token and hands it to `announce` once.
    static func setUp(
        configured: String?, database: Database, announce: (String) -> Void
    ) async throws -> AdminAuth {
        if let configured { return AdminAuth(tokenHash: Array(SHA256.hash(data: Data(configured.utf8)))) }
        let stored = try await database.withConnection { sql in
            try await sql.raw("SELECT value FROM quad_settings WHERE key = \(bind: settingKey)").first()?
                .decode(column: "value", as: String.self)
        }
        if let stored, let hash = Data(hexString: stored), hash.count == SHA256.byteCount {
            return AdminAuth(tokenHash: Array(hash))
        }
        let token = randomToken()
        let digest = SHA256.hash(data: Data(token.utf8))
        let hex = digest.hex
        try await database.withConnection { sql in
            try await sql.raw("INSERT INTO quad_settings (key, value) VALUES (\(bind: settingKey), \(bind: hex))").run()
        }
        announce(token)
        return AdminAuth(tokenHash: Array(digest))
    }

    /// 256 random bits, base64url.
    static func randomToken() -> String {
        SecureRandom.base64url(byteCount: 32)
    }

    /// Whether `token` is the admin token. Comparing digests byte by byte without an early exit leaks
    /// nothing about the token through timing.
    public func isAdminToken(_ token: String) -> Bool {
        guard !token.isEmpty, tokenHash.count == SHA256.byteCount else { return false }
        let presented = SHA256.hash(data: Data(token.utf8))
        var difference: UInt8 = 0
        for (a, b) in zip(presented, tokenHash) { difference |= a ^ b }
        return difference == 0
    }
}

extension Data {
    package init?(hexString: String) {
        guard hexString.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        var index = hexString.startIndex
        while index < hexString.endIndex {
            let next = hexString.index(index, offsetBy: 2)
            guard let byte = UInt8(hexString[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
