import Crypto
import Foundation
import QuadCore
import SQLKit

/// Signed-in sessions, for the web (a cookie) and the API (a bearer token). A token is 256 random bits,
/// given once; only its SHA-256 is stored. A session ends 30 days after it was last used, or at sign-out.
final class SessionStore: Sendable {
    enum Kind: String, Sendable { case web, api }

    static let idleLifetime: Int64 = 30 * 24 * 3600
    /// `last_seen` is written at most this often, so reading a page is not a write.
    static let touchInterval: Int64 = 3600

    let database: Database
    private let clock: any QuadClock

    init(database: Database, clock: any QuadClock) {
        self.database = database
        self.clock = clock
    }

    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).hex
    }

    /// Starts a session for `username`; returns the token and when it expires if unused.
    func start(for username: String, kind: Kind) async throws -> (token: String, expiresAt: Date) {
        let token = SecureRandom.base64url(byteCount: 32)
        let now = Int64(clock.now.timeIntervalSince1970)
        try await database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO sessions (token_hash, username_key, kind, created_at, last_seen)
                VALUES (\(bind: Self.hash(token)), \(bind: username.lowercased()), \(bind: kind.rawValue), \(bind: now), \(bind: now))
                """
            ).run()
        }
        return (token, Date(timeIntervalSince1970: TimeInterval(now + Self.idleLifetime)))
    }

    /// The person whose live session this token opens, if any.
    func person(for token: String) async throws -> Person? {
        let now = Int64(clock.now.timeIntervalSince1970)
        let hash = Self.hash(token)
        let found = try await database.read { sql -> (Person, Int64)? in
            guard
                let row = try await sql.raw(
                    """
                    SELECT p.username, p.display_name, p.role, p.student_id, s.last_seen FROM sessions s
                    JOIN people p ON p.username_key = s.username_key
                    WHERE s.token_hash = \(bind: hash) AND s.last_seen > \(bind: now - Self.idleLifetime)
                    """
                ).first()
            else { return nil }
            let person = Person(
                username: try row.decode(column: "username", as: String.self),
                displayName: try row.decode(column: "display_name", as: String.self),
                role: Role(rawValue: try row.decode(column: "role", as: String.self)) ?? .member,
                studentId: try row.decode(column: "student_id", as: String?.self))
            return (person, try row.decode(column: "last_seen", as: Int64.self))
        }
        guard let (person, lastSeen) = found else { return nil }
        if lastSeen < now - Self.touchInterval {
            try await database.withConnection { sql in
                try await sql.raw("UPDATE sessions SET last_seen = \(bind: now) WHERE token_hash = \(bind: hash)").run()
            }
        }
        return person
    }

    func end(_ token: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM sessions WHERE token_hash = \(bind: Self.hash(token))").run()
        }
    }

    func deleteExpired() async throws {
        let cutoff = Int64(clock.now.timeIntervalSince1970) - Self.idleLifetime
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM sessions WHERE last_seen <= \(bind: cutoff)").run()
        }
    }
}

/// Slows down password guessing: after 5 failures for one username or one address within 15 minutes,
/// sign-in answers 429 until the oldest of them is 15 minutes old. Kept in the database, so every
/// instance counts the same failures.
final class LoginThrottle: Sendable {
    static let limit = 5
    static let window: Int64 = 15 * 60

    let database: Database
    private let clock: any QuadClock

    init(database: Database, clock: any QuadClock) {
        self.database = database
        self.clock = clock
    }

    private static func keys(username: String, address: String) -> [String] {
        ["user:" + username.lowercased(), "addr:" + address]
    }

    /// Seconds to wait before trying again, or nil when a try is allowed.
    func retryAfter(username: String, address: String) async throws -> Int? {
        let now = Int64(clock.now.timeIntervalSince1970)
        return try await database.withConnection { sql in
            var wait: Int64 = 0
            for key in Self.keys(username: username, address: address) {
                let times = try await sql.raw(
                    "SELECT at FROM login_failures WHERE key = \(bind: key) AND at > \(bind: now - Self.window) ORDER BY at"
                ).all().map { try $0.decode(column: "at", as: Int64.self) }
                if times.count >= Self.limit {
                    wait = max(wait, times[times.count - Self.limit] + Self.window - now)
                }
            }
            return wait > 0 ? Int(wait) : nil
        }
    }

    func recordFailure(username: String, address: String) async throws {
        let now = Int64(clock.now.timeIntervalSince1970)
        try await database.withConnection { sql in
            for key in Self.keys(username: username, address: address) {
                try await sql.raw("INSERT INTO login_failures (key, at) VALUES (\(bind: key), \(bind: now))").run()
            }
            try await sql.raw("DELETE FROM login_failures WHERE at <= \(bind: now - Self.window)").run()
        }
    }

    func recordSuccess(username: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM login_failures WHERE key = \(bind: "user:" + username.lowercased())").run()
        }
    }
}
