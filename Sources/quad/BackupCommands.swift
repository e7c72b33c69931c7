import ArgumentParser
import Foundation
import Logging
import QuadCore
import QuadPlatform

/// The database `--database` or `QUAD_DATABASE_URL` names, as `quad serve` reads it: a SQLite file, or why not.
private func sqlitePath(_ option: String?, command: String) throws -> String {
    let text = option ?? ProcessInfo.processInfo.environment["QUAD_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    switch text.map(DatabaseLocation.init(parsing:)) ?? .sqlite(path: "quad.sqlite") {
    case .sqlite(let path)?:
        return path
    case .postgres?:
        throw CommandFailure(
            "quad \(command) copies a SQLite file; on PostgreSQL use pg_dump and pg_restore:\n"
                + "  pg_dump --format=custom --file=quad.dump \"$QUAD_DATABASE_URL\"\n"
                + "  pg_restore --clean --if-exists --dbname=\"$QUAD_DATABASE_URL\" quad.dump")
    case .sqliteMemory?:
        throw CommandFailure("a database in memory has nothing to copy")
    case nil:
        throw CommandFailure(
            "Invalid QUAD_DATABASE_URL: \"\(text ?? "")\" is not a file path, sqlite:PATH or postgres:// URL")
    }
}

/// A failure said in one line on stderr, exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs a local command: what it says on stdout, or its failure in one line on stderr (status 1).
private func runLocal(_ body: () async throws -> String) async throws {
    do {
        print(try await body())
    } catch let failure as CommandFailure {
        FileHandle.standardError.write(Data("quad: \(failure.description)\n".utf8))
        throw ExitCode(1)
    } catch let failure as Backup.Failure {
        FileHandle.standardError.write(Data("quad: \(failure.description)\n".utf8))
        throw ExitCode(1)
    }
}

private var quietLogger: Logger {
    var logger = Logger(label: "quad-backup")
    logger.logLevel = .critical
    return logger
}

/// `quad backup FILE`: a consistent copy of the SQLite database, also while a server uses it.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the SQLite database to FILE, also while a server uses it (a consistent copy, checked).")

    @Option(help: "The SQLite file [QUAD_DATABASE_URL] (default quad.sqlite).")
    var database: String?

    @Argument(help: "Where the copy goes (a new file).")
    var file: String

    func run() async throws {
        try await runLocal {
            let path = try sqlitePath(database, command: "backup")
            guard FileManager.default.fileExists(atPath: path) else { throw CommandFailure("\(path) does not exist") }
            let made = try await Backup.copy(from: path, to: file, at: SystemClock().now, logger: quietLogger)
            return "Backed up \(path) to \(made.file) (\(made.bytes) bytes, checked whole)."
        }
    }
}

/// `quad restore FILE`: puts a backup back, while no server uses the database.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put the backup FILE in place of the SQLite database (refused while a server uses it).")

    @Option(help: "The SQLite file to replace [QUAD_DATABASE_URL] (default quad.sqlite).")
    var database: String?

    @Argument(help: "The backup to put back (made by quad backup or QUAD_BACKUP_DIR).")
    var file: String

    func run() async throws {
        try await runLocal {
            let path = try sqlitePath(database, command: "restore")
            try await Backup.restore(file, to: path, logger: quietLogger)
            return "Restored \(file) to \(path)."
        }
    }
}
