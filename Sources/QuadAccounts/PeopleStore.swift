import Foundation
import HummingbirdBcrypt
import NIOPosix
import QuadCore
import QuadPlatform
import SQLKit

/// People and their password hashes, in table `people`. Usernames are unique without case
/// (`username_key` is the lowercased form); passwords are bcrypt hashes, never stored or logged in clear.
final class PeopleStore: Sendable {
    let database: Database
    /// bcrypt's cost: 12 in production; tests lower it so they run fast.
    let passwordCost: UInt8
    let clock: any QuadClock
    /// Who sessions sign in, in memory: told at once when a person changes or goes.
    private let sessions: SessionCache

    /// A hash of a password no one has, checked against when the username is unknown.
    private let decoyHash: String

    init(database: Database, passwordCost: UInt8, clock: any QuadClock, sessions: SessionCache) {
        self.clock = clock
        self.sessions = sessions
        self.database = database
        self.passwordCost = passwordCost
        self.decoyHash = Bcrypt.hash(SecureRandom.base64url(byteCount: 16), cost: passwordCost)
    }

    static let migrations = [
        Migration(
            id: 500, name: "people and sessions",
            statements: [
                """
                CREATE TABLE people (
                    username_key TEXT PRIMARY KEY, username TEXT NOT NULL, display_name TEXT NOT NULL,
                    password_hash TEXT NOT NULL, role TEXT NOT NULL, student_id TEXT UNIQUE, created_at TEXT NOT NULL)
                """,
                """
                CREATE TABLE sessions (
                    token_hash TEXT PRIMARY KEY,
                    username_key TEXT NOT NULL REFERENCES people (username_key) ON DELETE CASCADE,
                    kind TEXT NOT NULL, created_at BIGINT NOT NULL, last_seen BIGINT NOT NULL)
                """,
                "CREATE INDEX sessions_person ON sessions (username_key)",
                "CREATE TABLE login_failures (key TEXT NOT NULL, at BIGINT NOT NULL)",
                "CREATE INDEX login_failures_key ON login_failures (key, at)",
            ]),
        AppLinkStore.migration,
        LoginThrottle.reservations,
        MailAddressStore.migration,
        MailAddressStore.choicesMigration,
        PasswordResets.migration,
        SignInFlows.migration,
    ]

    /// A person from a row with the `people` columns `username`, `display_name`, `role`, `student_id`.
    static func person(_ row: any SQLRow) throws -> Person {
        Person(
            username: try row.decode(column: "username", as: String.self),
            displayName: try row.decode(column: "display_name", as: String.self),
            role: Role(rawValue: try row.decode(column: "role", as: String.self)) ?? .member,
            studentId: try row.decode(column: "student_id", as: String?.self))
    }

    private static let columns = "username, display_name, role, student_id"

    func all() async throws -> [Person] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.columns) FROM people ORDER BY username_key").all().map(
                Self.person)
        }
    }

    static let taken = Problem.conflict(
        "username-taken", title: "Username taken", detail: "Someone already has this username.")

    func find(_ username: String) async throws -> Person? {
        try await database.withConnection { sql in
            try await sql.raw(
                "SELECT \(unsafeRaw: Self.columns) FROM people WHERE username_key = \(bind: username.lowercased())"
            ).first().map(Self.person)
        }
    }

    /// The username of the person whose student record is `id`, if anyone's is.
    func hasAdmin() async throws -> Bool {
        try await database.withConnection { sql in
            try await sql.raw("SELECT username_key FROM people WHERE role = 'admin'").first() != nil
        }
    }

    /// Adds a person. `uniqueName`: the name is their own choice (open sign-up), and may not copy someone's.
    func create(_ person: Person, password: String, uniqueName: Bool = false) async throws -> Person {
        // A taken username is answered before the costly hash (the transaction checks again).
        if try await find(person.username) != nil { throw Self.taken }
        let hash = try await hash(password)
        return try await database.transaction { sql in
            let clash = try await sql.raw(
                "SELECT username_key FROM people WHERE username_key = \(bind: person.username.lowercased())"
            ).first()
            if clash != nil { throw Self.taken }
            try await Self.checkStudentId(sql, person.studentId, except: nil)
            if uniqueName { try await Self.checkDisplayName(sql, person.displayName) }
            try await self.insert(person, passwordHash: hash, sql)
            return person
        }
    }

    /// A person's row. `passwordHash`: bcrypt's, or `noPassword` for someone who signs in only through the
    /// organisation's provider.
    func insert(_ person: Person, passwordHash: String, _ sql: any SQLDatabase) async throws {
        try await sql.raw(
            """
            INSERT INTO people (username_key, username, display_name, password_hash, role, student_id, created_at)
            VALUES (\(bind: person.username.lowercased()), \(bind: person.username), \(bind: person.displayName),
                    \(bind: passwordHash), \(bind: person.role.rawValue), \(bind: person.studentId), \(bind: Timestamp.string(self.clock.now)))
            """
        ).run()
    }

    /// The password hash of someone with no password: no bcrypt hash, so no password matches it.
    static let noPassword = "!"

    /// Changes what is given, in one transaction with what it ends: a new password ends every session of that
    /// person and, unless `keepKeys`, their app links and calendar addresses (`keys`); a student id that moves
    /// ends the calendar addresses of the records it leaves and joins, so no one reads another's feed.
    /// `keepSession`: the one session that stays (a person changing their own password keeps the one they use).
    /// `also`: what else changes with them, in the same transaction (their mail address).
    func update(
        _ username: String, displayName: String?, role: Role?, studentId: String??, password: String?,
        keepKeys: Bool = false, keepSession: String? = nil, keys: any PersonKeys,
        also: @escaping @Sendable (any SQLDatabase) async throws -> Void = { _ in }
    ) async throws -> Person {
        let hash: String? = if let password { try await self.hash(password) } else { nil }
        let key = username.lowercased()
        let (person, announce) = try await database.transaction { sql in
            let (person, moved) = try await Self.change(
                username, displayName: displayName, role: role, studentId: studentId, sql)
            try await Self.keepAnAdmin(sql)
            try await also(sql)
            var ended = moved
            var ownKey: String?
            if hash != nil, try await Self.signsInWithTheOrganisation(sql, key) { throw Self.organisationAccount }
            if let hash {
                try await sql.raw("UPDATE people SET password_hash = \(bind: hash) WHERE username_key = \(bind: key)")
                    .run()
                try await sql.raw(
                    "DELETE FROM sessions WHERE username_key = \(bind: key) AND token_hash <> \(bind: keepSession ?? "")"
                ).run()
                if !keepKeys {
                    try await sql.raw("DELETE FROM app_links WHERE username_key = \(bind: key)").run()
                    ownKey = key
                    ended += [person.studentId].compactMap { $0 }
                }
            }
            guard ownKey != nil || !ended.isEmpty else { return (person, Self.nothingToAnnounce) }
            return (person, try await keys.endKeys(of: ownKey, studentIds: Array(Set(ended)), in: sql))
        }
        // Their sessions now sign in the person as changed (a role, a name), or none when the password changed.
        await sessions.forget(username: key)
        await announce()
        return person
    }

    private static let nothingToAnnounce: @Sendable () async -> Void = {}

    /// Inside a transaction: the person's name, role and student id as given (nil leaves one). Returns them as changed,
    /// and the student ids whose feeds must end because one moved (the one left and the one joined).
    static func change(
        _ username: String, displayName: String?, role: Role?, studentId: String??, _ sql: any SQLDatabase
    ) async throws -> (Person, moved: [String]) {
        let key = username.lowercased()
        guard
            var person = try await sql.raw(
                "SELECT \(unsafeRaw: Self.columns) FROM people WHERE username_key = \(bind: key)"
            ).first().map(Self.person)
        else { throw Problem.notFound("There is no one called \(username).") }
        let formerStudentId = person.studentId
        if let displayName { person.displayName = displayName }
        if let role { person.role = role }
        if let studentId {
            try await Self.checkStudentId(sql, studentId, except: key)
            person.studentId = studentId
        }
        try await sql.raw(
            """
            UPDATE people SET display_name = \(bind: person.displayName), role = \(bind: person.role.rawValue),
                student_id = \(bind: person.studentId)
            WHERE username_key = \(bind: key)
            """
        ).run()
        let moved = formerStudentId == person.studentId ? [] : [formerStudentId, person.studentId].compactMap { $0 }
        return (person, moved)
    }

    /// Removes the person and their sessions, and has the other features let go of what they held (`removals`),
    /// in one transaction. Returns what to announce once it is committed, or nil when there was no such person.
    func delete(
        _ username: String, removals: [any PersonRemoval], keys: any PersonKeys
    ) async throws -> [@Sendable () async -> Void]? {
        let key = username.lowercased()
        let changed = try await database.transaction { sql -> [@Sendable () async -> Void]? in
            guard
                let person = try await sql.raw(
                    "SELECT \(unsafeRaw: Self.columns) FROM people WHERE username_key = \(bind: key)"
                ).first().map(Self.person)
            else { return nil }
            var changed: [@Sendable () async -> Void] = []
            for removal in removals { changed.append(try await removal.release(key, in: sql)) }
            // Someone given the same username or student id later never reads this person's feeds.
            changed.append(try await keys.endKeys(of: key, studentIds: [person.studentId].compactMap { $0 }, in: sql))
            try await sql.raw("DELETE FROM sessions WHERE username_key = \(bind: key)").run()
            try await sql.raw("DELETE FROM app_links WHERE username_key = \(bind: key)").run()
            try await sql.raw("DELETE FROM people WHERE username_key = \(bind: key)").run()
            try await Self.keepAnAdmin(sql)
            return changed
        }
        if changed != nil { await sessions.forget(username: key) }
        return changed
    }

    /// The person when the password is theirs. An unknown username costs the same bcrypt work as a wrong
    /// password, so the time taken tells nothing.
    func verify(username: String, password: String, place: PasswordHashing.Place) async throws -> Person? {
        let row = try await database.withConnection { sql in
            try await sql.raw(
                "SELECT \(unsafeRaw: Self.columns), password_hash FROM people WHERE username_key = \(bind: username.lowercased())"
            ).first()
        }
        let stored = try row?.decode(column: "password_hash", as: String.self)
        // Someone with no password (they sign in through the organisation) costs the same work as a wrong password.
        let hash = stored.flatMap { $0 == Self.noPassword ? nil : $0 } ?? decoyHash
        let matches = try await place.verify(password, hash: hash)
        guard matches, stored != Self.noPassword, let row else { return nil }
        return try Self.person(row)
    }

    private func hash(_ password: String) async throws -> String {
        let cost = passwordCost
        return try await PasswordHashing.hash(password, cost: cost)
    }

    static let organisationAccount = Problem.conflict(
        "organisation-account", title: "Signs in with the organisation",
        detail:
            "They sign in with the organisation's account: Quad keeps no password for them (one would outlive their removal there)."
    )

    /// Whether the person signs in through the organisation's provider (`organisation_people`).
    static func signsInWithTheOrganisation(_ sql: any SQLDatabase, _ key: String) async throws -> Bool {
        try await sql.raw("SELECT username_key FROM organisation_people WHERE username_key = \(bind: key)").first()
            != nil
    }

    /// Quad keeps at least one admin (the admin token acts as one): a change that would leave none is refused,
    /// and its transaction rolled back.
    static func keepAnAdmin(_ sql: any SQLDatabase) async throws {
        guard try await sql.raw("SELECT username_key FROM people WHERE role = 'admin'").first() != nil else {
            throw Problem.conflict(
                "last-admin", title: "The last admin",
                detail: "Quad keeps at least one admin: make someone else an admin first.")
        }
    }

    /// Someone signing themselves up is not shown under another person's name (an admin may name two people alike:
    /// real people share names).
    private static func checkDisplayName(_ sql: any SQLDatabase, _ name: String) async throws {
        for row in try await sql.raw("SELECT display_name FROM people").all() {
            let other = try row.decode(column: "display_name", as: String.self)
            if other.compare(name, options: [.caseInsensitive, .diacriticInsensitive]) == .orderedSame {
                throw ValidationFailure(
                    field: "displayName",
                    message: "Someone is already called \(other): choose a name people can tell apart.")
            }
        }
    }

    static func checkStudentId(_ sql: any SQLDatabase, _ studentId: String?, except key: String?) async throws {
        guard let studentId else { return }
        let owner = try await sql.raw("SELECT username_key FROM people WHERE student_id = \(bind: studentId)").first()?
            .decode(column: "username_key", as: String.self)
        if let owner, owner != key {
            throw ValidationFailure(field: "studentId", message: "Another person has student id \(studentId).")
        }
    }
}
