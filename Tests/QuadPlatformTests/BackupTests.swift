import Foundation
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

/// Rotating backups (`QUAD_BACKUP_DIR`), and the lock that keeps a restore from replacing a database in use.
/// (`quad backup` under a booking storm, and `quad restore` into a new server: e2e/test_backup.py.)
@Suite struct BackupTests {
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "quad-backups-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func theNewestCopiesAreKeptEachWholeAndNamedForWhenItWasMade() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appending(path: "quad.sqlite").path
        let backups = folder.appending(path: "backups")
        try FileManager.default.createDirectory(at: backups, withIntermediateDirectories: true)
        var configuration = TestApp.configuration(.sqlite(path: path))
        configuration.backups = BackupSettings(directory: backups.path)
        configuration.backups?.keep = 2
        let clock = TestTime.clock(at: TestTime.weekdayMorning)
        configuration.clock = clock
        let database = try await Database.open(.sqlite(path: path), logger: TestDatabase.logger)
        let platform = try await Features.start(configuration, database: database, logger: TestDatabase.logger) { _ in
        }.platform
        let rotating = try #require(platform.backups)
        var made: [Backup.Made] = []
        for _ in 0..<3 {
            await rotating.backUp()
            made.append(try #require(rotating.last))
            clock.advance(by: .seconds(3600))
        }
        await database.close()
        let kept = try FileManager.default.contentsOfDirectory(atPath: backups.path).sorted()
        #expect(kept == made.suffix(2).map { Backup.fileName(at: $0.at) }, "the two newest, named for when")
        #expect(made.map { ($0.file as NSString).lastPathComponent } == made.map { Backup.fileName(at: $0.at) })
        for name in kept { try await Backup.check(backups.appending(path: name).path, logger: TestDatabase.logger) }
    }

    @Test func aRestoreNeverReplacesADatabaseInUseAndNoServerOpensOneBeingRestored() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appending(path: "quad.sqlite").path
        let copy = folder.appending(path: "copy.sqlite").path
        let database = try await Database.open(.sqlite(path: path), logger: TestDatabase.logger)
        _ = try await Platform.start(
            TestApp.configuration(.sqlite(path: path)), database: database, migrations: [], logger: TestDatabase.logger
        ) { _ in }
        _ = try await Backup.copy(from: path, to: copy, at: TestTime.weekdayMorning, logger: TestDatabase.logger)
        await #expect(throws: Backup.Failure.self) {
            try await Backup.restore(copy, to: path, logger: TestDatabase.logger)
        }
        await database.close()
        try await Backup.restore(copy, to: path, logger: TestDatabase.logger)

        let restoring = try #require(ServingLock(path: path, exclusive: true))
        await #expect(throws: Backup.Failure.self) {
            _ = try await Database.open(.sqlite(path: path), logger: TestDatabase.logger)
        }
        restoring.release()
        await (try await Database.open(.sqlite(path: path), logger: TestDatabase.logger)).close()

        // Not a Quad database: refused before anything is replaced.
        FileManager.default.createFile(atPath: folder.appending(path: "notes.txt").path, contents: Data("hello".utf8))
        await #expect(throws: Backup.Failure.self) {
            try await Backup.restore(folder.appending(path: "notes.txt").path, to: path, logger: TestDatabase.logger)
        }
    }

    @Test func backupSettingsThatDoNotReadSayWhy() throws {
        let folder = FileManager.default.temporaryDirectory.path
        let settings = try ServerConfiguration(environment: [
            "QUAD_BACKUP_DIR": folder, "QUAD_BACKUP_EVERY": "6h", "QUAD_BACKUP_KEEP": "3",
        ]).backups
        #expect(settings?.every == .seconds(6 * 3600) && settings?.keep == 3)
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: [
                "QUAD_BACKUP_DIR": folder, "QUAD_DATABASE_URL": "postgres://u@db/quad",
            ])
        }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: ["QUAD_BACKUP_DIR": folder, "QUAD_BACKUP_EVERY": "often"])
        }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration(environment: ["QUAD_BACKUP_KEEP": "3"]) }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: ["QUAD_BACKUP_DIR": "/no/such/folder"])
        }
    }
}
