import Crypto
import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Signed-in sessions, for the web (a cookie) and the API (a bearer token). A token is 256 random bits,
/// given once; only its SHA-256 is stored. A session ends 30 days after it was last used, or at sign-out.
/// Who a token signs in is read from memory (`SessionCache`) once the database has said it.
final class SessionStore: Sendable {
    enum Kind: String, Sendable { case web, api }

    static let idleLifetime: Int64 = 30 * 24 * 3600
    /// `last_seen` is written at most this often, so reading a page is not a write.
    static let touchInterval: Int64 = 3600

    let database: Database
    private let clock: any QuadClock
    let cache: SessionCache

    init(database: Database, clock: any QuadClock, hub: EventHub) {
        self.database = database
        self.clock = clock
        self.cache = SessionCache(hub: hub)
    }

    /// Asked on every signed-in request: the token's bytes are hashed where they are (a `Data` of them first cost a
    /// signed-in poll about 1 % of its time, perf of `rooms-304-cookie`).
    static func hash(_ token: String) -> String {
        var token = token
        return token.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }.hex
    }

    /// Starts a session for `username`; returns the token and when it expires if unused. `endsAt`: a session made
    /// through the organisation's provider ends then, used or not (`via` says so, for signing out there too).
    func start(
        for username: String, kind: Kind, endsAt: Date? = nil, via: String? = nil
    ) async throws -> (token: String, expiresAt: Date) {
        let token = SecureRandom.base64url(byteCount: 32)
        let now = Int64(clock.now.timeIntervalSince1970)
        let ends = endsAt.map { Int64($0.timeIntervalSince1970) }
        try await database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO sessions (token_hash, username_key, kind, created_at, last_seen, expires_at, via)
                VALUES (\(bind: Self.hash(token)), \(bind: username.lowercased()), \(bind: kind.rawValue), \(bind: now), \(bind: now),
                        \(bind: ends), \(bind: via))
                """
            ).run()
        }
        let idle = now + Self.idleLifetime
        return (token, Date(timeIntervalSince1970: TimeInterval(ends.map { min($0, idle) } ?? idle)))
    }

    /// The person whose live session this token opens, if any.
    func person(for token: String) async throws -> Person? {
        let now = Int64(clock.now.timeIntervalSince1970)
        let hash = Self.hash(token)
        if let person = remembered(hash, now: now) { return person }
        let epoch = cache.epoch
        let found = try await database.read { sql -> (Person, Int64, Int64?)? in
            guard
                let row = try await sql.raw(
                    """
                    SELECT p.username, p.display_name, p.role, p.student_id, s.last_seen, s.expires_at FROM sessions s
                    JOIN people p ON p.username_key = s.username_key
                    WHERE s.token_hash = \(bind: hash) AND s.last_seen > \(bind: now - Self.idleLifetime)
                        AND (s.expires_at IS NULL OR s.expires_at > \(bind: now))
                    """
                ).first()
            else { return nil }
            let person = Person(
                username: try row.decode(column: "username", as: String.self),
                displayName: try row.decode(column: "display_name", as: String.self),
                role: Role(rawValue: try row.decode(column: "role", as: String.self)) ?? .member,
                studentId: try row.decode(column: "student_id", as: String?.self))
            return (
                person, try row.decode(column: "last_seen", as: Int64.self),
                try row.decode(column: "expires_at", as: Int64?.self)
            )
        }
        guard var (person, lastSeen, endsAt) = found else { return nil }
        if lastSeen < now - Self.touchInterval {
            try await database.withConnection { sql in
                try await sql.raw("UPDATE sessions SET last_seen = \(bind: now) WHERE token_hash = \(bind: hash)").run()
            }
            lastSeen = now
        }
        cache.store(hash, person: person, lastSeen: lastSeen, endsAt: endsAt, epoch: epoch)
        return person
    }

    /// The person from memory, by the token's hash, when the session is live and its last use needs no writing down.
    func rememberedPerson(hash: String) -> Person? {
        remembered(hash, now: Int64(clock.now.timeIntervalSince1970))
    }

    private func remembered(_ hash: String, now: Int64) -> Person? {
        guard let entry = cache.entry(hash), entry.lastSeen > now - Self.touchInterval,
            entry.endsAt.map({ $0 > now }) ?? true
        else { return nil }
        return entry.person
    }

    /// Ends the session; returns how it was made (`via`: "organisation" for one made through the provider).
    @discardableResult
    func end(_ token: String) async throws -> String? {
        let via = try await database.withConnection { sql in
            let via = try await sql.raw("SELECT via FROM sessions WHERE token_hash = \(bind: Self.hash(token))")
                .first()?
                .decode(column: "via", as: String?.self)
            try await sql.raw("DELETE FROM sessions WHERE token_hash = \(bind: Self.hash(token))").run()
            return via
        }
        await cache.forget(token: Self.hash(token))
        return via
    }

    /// Ends every session of a person at once (an admin's choice: someone who left the organisation).
    func endAll(of username: String) async throws {
        let key = username.lowercased()
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM sessions WHERE username_key = \(bind: key)").run()
        }
        await cache.forget(username: key)
    }

    func deleteExpired() async throws {
        let cutoff = Int64(clock.now.timeIntervalSince1970) - Self.idleLifetime
        try await database.withConnection { sql in
            try await sql.raw(
                "DELETE FROM sessions WHERE last_seen <= \(bind: cutoff) OR expires_at <= \(bind: cutoff + Self.idleLifetime)"
            ).run()
        }
    }
}

/// Slows down password guessing without letting anyone lock someone else out. Failures are counted per
/// (username, address) pair: the first 3 in 15 minutes cost nothing, then each one makes that pair wait longer
/// (5 s, 10 s, 20 s … up to 15 minutes). An address also has a wider limit over all the usernames it tries
/// (30 failures in 15 minutes). No count is per username alone: failures from other addresses never stop a
/// person signing in from their own. Kept in the database, so every instance counts the same failures.
/// Behind a reverse proxy the address is the client's only when `QUAD_TRUST_PROXY` names that proxy.
final class LoginThrottle: Sendable {
    static let freeFailures = 3
    static let firstDelay: Int64 = 5
    static let addressLimit = 30
    static let window: Int64 = 15 * 60

    let database: Database
    private let clock: any QuadClock

    init(database: Database, clock: any QuadClock) {
        self.database = database
        self.clock = clock
    }

    private static func pairKey(username: String, address: String) -> String {
        "pair:" + username.lowercased() + " " + address
    }

    private static func addressKey(_ address: String) -> String { "addr:" + address }

    /// A try, counted as a failure before it is made: concurrent tries each see the ones before them, so no burst
    /// gets past the back-off or the address's limit. A try that succeeds takes its count back (`recordSuccess`).
    enum Try: Sendable {
        /// The reservation, and how many failures of the pair came before it in the window.
        case reserved(String, before: Int)
        /// Seconds to wait before trying again.
        case wait(Int)
    }

    /// Takes a try for the pair and the address atomically (under the address's lock on PostgreSQL, SQLite's one
    /// writer otherwise), or says how long to wait.
    func reserve(username: String, address: String) async throws -> Try {
        let now = Int64(clock.now.timeIntervalSince1970)
        let pairKey = Self.pairKey(username: username, address: address)
        let addressKey = Self.addressKey(address)
        let engine = database.engine
        return try await database.transaction { sql in
            if engine == .postgres {
                try await sql.raw("SELECT pg_advisory_xact_lock(hashtext(\(bind: addressKey)))").run()
            }
            func failures(_ key: String) async throws -> [Int64] {
                try await sql.raw(
                    "SELECT at FROM login_failures WHERE key = \(bind: key) AND at > \(bind: now - Self.window) ORDER BY at"
                ).all().map { try $0.decode(column: "at", as: Int64.self) }
            }
            var wait: Int64 = 0
            let pair = try await failures(pairKey)
            if pair.count >= Self.freeFailures, let last = pair.last {
                wait = last + Self.delay(afterFailures: pair.count) - now
            }
            let byAddress = try await failures(addressKey)
            if byAddress.count >= Self.addressLimit {
                wait = max(wait, byAddress[byAddress.count - Self.addressLimit] + Self.window - now)
            }
            if wait > 0 { return .wait(Int(wait)) }
            let reservation = SecureRandom.base64url(byteCount: 12)
            for key in [pairKey, addressKey] {
                try await sql.raw(
                    "INSERT INTO login_failures (key, at, reservation) VALUES (\(bind: key), \(bind: now), \(bind: reservation))"
                ).run()
            }
            try await sql.raw("DELETE FROM login_failures WHERE at <= \(bind: now - Self.window)").run()
            return .reserved(reservation, before: pair.count)
        }
    }

    /// The wait after `failures` failures of one pair: doubling from `firstDelay`, at most the window.
    static func delay(afterFailures failures: Int) -> Int64 {
        let doublings = min(max(0, failures - freeFailures), 16)
        return min(firstDelay << Int64(doublings), window)
    }

    /// The try succeeded: the pair's failures are forgotten, and the address's count gets this try back.
    func recordSuccess(username: String, address: String, reservation: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw(
                """
                DELETE FROM login_failures
                WHERE key = \(bind: Self.pairKey(username: username, address: address)) OR reservation = \(bind: reservation)
                """
            ).run()
        }
    }

    /// The try could not be judged (its hash failed: the server stopping): it counts for nothing.
    func cancel(reservation: String) async throws {
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM login_failures WHERE reservation = \(bind: reservation)").run()
        }
    }

    /// Gives the failure counts their reservation column.
    static let reservations = Migration(
        id: 503, name: "sign-in tries reserved",
        statements: ["ALTER TABLE login_failures ADD COLUMN reservation TEXT"])
}
