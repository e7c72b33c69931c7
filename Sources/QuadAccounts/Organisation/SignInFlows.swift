import Crypto
import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Sign-ins through the provider under way (table `organisation_flows`) and the one-time codes that hand a finished
/// one to the command line (table `organisation_codes`).
///
/// A flow is bound to the browser that started it: the browser keeps a random key in a cookie, and the row keeps
/// only the key's SHA-256 and the `state`'s. The PKCE verifier and the nonce are drawn from the key (HMAC), so
/// nothing stored could finish a sign-in: the provider's code needs the browser's cookie too. A flow is used once
/// (claimed and deleted in one statement) and lasts ten minutes.
struct SignInFlows: Sendable {
    let database: Database
    let clock: any QuadClock

    static let lifetime: Int64 = 600
    /// A code for the command line works once, for two minutes.
    static let codeLifetime: Int64 = 120

    static let migration = Migration(
        id: 507, name: "sign-in with the organisation",
        statements: [
            """
            CREATE TABLE organisation_flows (
                state_hash TEXT PRIMARY KEY, browser_hash TEXT NOT NULL, next TEXT NOT NULL,
                app_port INTEGER, app_state TEXT, app_challenge TEXT, created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX organisation_flows_age ON organisation_flows (created_at)",
            """
            CREATE TABLE organisation_codes (
                code_hash TEXT PRIMARY KEY,
                username_key TEXT NOT NULL REFERENCES people (username_key) ON DELETE CASCADE,
                challenge TEXT NOT NULL, created_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE organisation_people (
                issuer TEXT NOT NULL, subject TEXT NOT NULL,
                username_key TEXT NOT NULL UNIQUE REFERENCES people (username_key) ON DELETE CASCADE,
                PRIMARY KEY (issuer, subject))
            """,
            // A session made through the provider ends at a set time (then the provider is asked again), and
            // signing out of it signs out at the provider too.
            "ALTER TABLE sessions ADD COLUMN expires_at BIGINT",
            "ALTER TABLE sessions ADD COLUMN via TEXT",
        ])

    /// The command line's part of a flow: the loopback port it listens on (RFC 8252), its own `state`, and the
    /// S256 challenge of the verifier it will trade the code with.
    struct App: Sendable, Equatable {
        let port: Int
        let state: String
        let challenge: String

        /// Each part as the command line may send it, or nil.
        init?(port: String?, state: String?, challenge: String?) {
            guard let port = port.flatMap(Int.init), (1024...65535).contains(port), let state, let challenge,
                Self.token(state), Self.token(challenge), challenge.count == 43
            else { return nil }
            self.port = port
            self.state = state
            self.challenge = challenge
        }

        static func token(_ text: String) -> Bool {
            (16...128).contains(text.count)
                && text.unicodeScalars.allSatisfy {
                    $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_".unicodeScalars.contains($0))
                }
        }

        /// Where the browser goes at the end: this machine only, at the port the command line listens on.
        func redirect(code: String) -> String {
            "http://127.0.0.1:\(port)/quad-sign-in?code=\(code)&state=\(state)"
        }
    }

    /// What a started flow gives the browser and the provider.
    struct Started: Sendable {
        let browserKey: String
        let state: String
        let nonce: String
        let challenge: String
    }

    /// A flow the callback claimed.
    struct Claimed: Sendable {
        let next: String
        let app: App?
        let nonce: String
        let verifier: String
    }

    func start(next: SitePath, app: App?) async throws -> Started {
        let key = SecureRandom.base64url(byteCount: 32)
        let state = SecureRandom.base64url(byteCount: 24)
        let now = Int64(clock.now.timeIntervalSince1970)
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM organisation_flows WHERE created_at <= \(bind: now - Self.lifetime)").run()
            try await sql.raw(
                """
                INSERT INTO organisation_flows (state_hash, browser_hash, next, app_port, app_state, app_challenge, created_at)
                VALUES (\(bind: Self.hash(state)), \(bind: Self.hash(key)), \(bind: next.value), \(bind: app?.port),
                        \(bind: app?.state), \(bind: app?.challenge), \(bind: now))
                """
            ).run()
        }
        return Started(
            browserKey: key, state: state, nonce: Self.derive(key, "nonce"),
            challenge: Self.challenge(Self.derive(key, "verifier")))
    }

    /// The flow `state` names, when this browser started it less than ten minutes ago: deleted as it is read, so a
    /// second answer with the same `state` (a replay) finds nothing.
    func claim(state: String, browserKey: String) async throws -> Claimed? {
        let now = Int64(clock.now.timeIntervalSince1970)
        let row = try await database.transaction { sql in
            let row = try await sql.raw(
                """
                SELECT next, app_port, app_state, app_challenge, created_at FROM organisation_flows
                WHERE state_hash = \(bind: Self.hash(state)) AND browser_hash = \(bind: Self.hash(browserKey))
                """
            ).first()
            if row != nil {
                try await sql.raw("DELETE FROM organisation_flows WHERE state_hash = \(bind: Self.hash(state))").run()
            }
            return row
        }
        guard let row, try row.decode(column: "created_at", as: Int64.self) > now - Self.lifetime else { return nil }
        let port = try row.decode(column: "app_port", as: Int?.self)
        return Claimed(
            next: try row.decode(column: "next", as: String.self),
            app: App(
                port: port.map(String.init), state: try row.decode(column: "app_state", as: String?.self),
                challenge: try row.decode(column: "app_challenge", as: String?.self)),
            nonce: Self.derive(browserKey, "nonce"), verifier: Self.derive(browserKey, "verifier"))
    }

    /// A flow given up (the provider answered with an error): forgotten at once.
    func drop(state: String, browserKey: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                DELETE FROM organisation_flows
                WHERE state_hash = \(bind: Self.hash(state)) AND browser_hash = \(bind: Self.hash(browserKey))
                """
            ).run()
        }
    }

    /// A one-time code for the command line that started the flow, for `username`.
    func code(for username: String, challenge: String) async throws -> String {
        let code = SecureRandom.base64url(byteCount: 32)
        let now = Int64(clock.now.timeIntervalSince1970)
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM organisation_codes WHERE created_at <= \(bind: now - Self.codeLifetime)")
                .run()
            try await sql.raw(
                """
                INSERT INTO organisation_codes (code_hash, username_key, challenge, created_at)
                VALUES (\(bind: Self.hash(code)), \(bind: username.lowercased()), \(bind: challenge), \(bind: now))
                """
            ).run()
        }
        return code
    }

    /// Who the code signs in, when it is live and `verifier` is the one its challenge was made from. Used once:
    /// a wrong verifier spends it too, so no one can try verifiers against a code.
    func redeem(code: String, verifier: String) async throws -> String? {
        let now = Int64(clock.now.timeIntervalSince1970)
        let row = try await database.transaction { sql in
            let row = try await sql.raw(
                "SELECT username_key, challenge, created_at FROM organisation_codes WHERE code_hash = \(bind: Self.hash(code))"
            ).first()
            if row != nil {
                try await sql.raw("DELETE FROM organisation_codes WHERE code_hash = \(bind: Self.hash(code))").run()
            }
            return row
        }
        guard let row, try row.decode(column: "created_at", as: Int64.self) > now - Self.codeLifetime,
            try row.decode(column: "challenge", as: String.self) == Self.challenge(verifier)
        else { return nil }
        return try row.decode(column: "username_key", as: String.self)
    }

    static func hash(_ text: String) -> String { SHA256.hash(data: Array(text.utf8)).hex }

    /// A value drawn from the browser's key: the same key always gives the same nonce and verifier.
    static func derive(_ key: String, _ purpose: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(purpose.utf8), using: SymmetricKey(data: Array(key.utf8)))
        return Data(mac).base64URLEncoded
    }

    /// PKCE's S256 challenge (RFC 7636 §4.2).
    static func challenge(_ verifier: String) -> String {
        Data(SHA256.hash(data: Array(verifier.utf8))).base64URLEncoded
    }
}
