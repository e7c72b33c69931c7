import Foundation
import Logging
import NIOPosix
import SQLKit
import SQLiteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Copies of a SQLite database made while a server uses it, and putting one back. (PostgreSQL has `pg_dump`.)
public enum Backup {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// What a copy came to.
    public struct Made: Sendable, Equatable {
        public let file: String
        public let bytes: Int
        public let at: Date
    }

    /// Copies the database at `path` to `file` with `VACUUM INTO`: one read transaction, so the copy is the
    /// database as it was at one instant, every commit before it and none after, while the server goes on writing
    /// (WAL). The copy is written beside `file` and renamed into place once whole and checked
    /// (`PRAGMA integrity_check`), so `file` is never half a backup.
    public static func copy(from path: String, to file: String, at now: Date, logger: Logger) async throws -> Made {
        guard !FileManager.default.fileExists(atPath: file) else { throw Failure("\(file) already exists") }
        let partial = file + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        let source = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        do {
            try await source.sql().raw("VACUUM INTO \(bind: partial)").run()
            try await source.close()
        } catch {
            try? await source.close()
            try? FileManager.default.removeItem(atPath: partial)
            throw Failure("could not copy \(path): \(error)")
        }
        do {
            try await check(partial, logger: logger)
            try FileManager.default.moveItem(atPath: partial, toPath: file)
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        return Made(file: file, bytes: bytes, at: now)
    }

    /// Puts the backup `file` in place of the database at `path`, once it is checked to be a whole Quad database,
    /// refusing while a server uses `path` (its `ServingLock`). The old database's journal goes with it (a journal
    /// left beside the restored file would be replayed into it).
    public static func restore(_ file: String, to path: String, logger: Logger) async throws {
        guard FileManager.default.fileExists(atPath: file) else { throw Failure("\(file) does not exist") }
        try await check(file, logger: logger)
        guard let lock = ServingLock(path: path, exclusive: true) else {
            throw Failure("a server is using \(path): stop it first")
        }
        defer { lock.release() }
        let incoming = path + ".restoring"
        try? FileManager.default.removeItem(atPath: incoming)
        try FileManager.default.copyItem(atPath: file, toPath: incoming)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        guard rename(incoming, path) == 0 else {
            try? FileManager.default.removeItem(atPath: incoming)
            throw Failure("could not put \(file) in place of \(path) (\(String(cString: strerror(errno))))")
        }
    }

    /// A whole SQLite database (`PRAGMA integrity_check` says ok) that Quad made (it has `quad_migrations`).
    static func check(_ file: String, logger: Logger) async throws {
        let connection = try await SQLiteConnection.open(storage: .file(path: file), logger: logger)
        let sql = connection.sql()
        let integrity = try? await sql.raw("PRAGMA integrity_check").first()?.decode(
            column: "integrity_check", as: String.self)
        let migrations = try? await sql.raw("SELECT count(*) AS n FROM quad_migrations").first()?.decode(
            column: "n", as: Int.self)
        try? await connection.close()
        guard integrity == "ok" else {
            throw Failure("\(file) is not a whole SQLite database (\(integrity ?? "unreadable"))")
        }
        guard let migrations, migrations > 0 else { throw Failure("\(file) is not a Quad database") }
    }

    /// A backup's file name in `QUAD_BACKUP_DIR`: the instant it was made, so they sort by age.
    public static func fileName(at now: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        return String(
            format: "quad-%04d%02d%02d-%02d%02d%02dZ.sqlite", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
            parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
    }
}

/// The lock on a SQLite database's `<path>.lock` file: every server using the database holds it shared while it
/// runs; a restore takes it alone, so it never replaces a file a server has open, and no server starts while it
/// does. (`flock`: the kernel lets go of it when the process ends, however it ends.)
public final class ServingLock: Sendable {
    private let descriptor: Int32

    /// Nil when it cannot be had now (without waiting).
    public init?(path: String, exclusive: Bool) {
        let descriptor = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    public func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
