import Foundation
import Logging
import NIOConcurrencyHelpers
import QuadCore
import ServiceLifecycle

/// `QUAD_BACKUP_DIR`: a copy of the database at start and then every `QUAD_BACKUP_EVERY`, the newest
/// `QUAD_BACKUP_KEEP` kept. A copy that fails is logged as an error and tried again at the next turn.
public final class RotatingBackups: Service, Sendable {
    let path: String
    let settings: BackupSettings
    let clock: any QuadClock
    let logger: Logger
    private let made = NIOLockedValueBox<Backup.Made?>(nil)

    init(path: String, settings: BackupSettings, clock: any QuadClock, logger: Logger) {
        self.path = path
        self.settings = settings
        self.clock = clock
        self.logger = logger
    }

    /// The last copy made since start (for `/admin`).
    public var last: Backup.Made? { made.withLockedValue { $0 } }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await self.backUp()
                try? await self.clock.sleep(for: self.settings.every)
            }
        }
    }

    /// One copy now, then the oldest beyond `keep` removed.
    func backUp() async {
        let now = clock.now
        let file = (settings.directory as NSString).appendingPathComponent(Backup.fileName(at: now))
        do {
            let copy = try await Backup.copy(from: path, to: file, at: now, logger: logger)
            made.withLockedValue { $0 = copy }
            logger.info("Backed up the database to \(copy.file) (\(copy.bytes) bytes)")
            let names = try FileManager.default.contentsOfDirectory(atPath: settings.directory)
                .filter { $0.hasPrefix("quad-") && $0.hasSuffix("Z.sqlite") }.sorted()
            for old in names.dropLast(settings.keep) {
                try? FileManager.default.removeItem(
                    atPath: (settings.directory as NSString).appendingPathComponent(old))
            }
        } catch {
            logger.error("Backing up the database failed: \(error)")
        }
    }
}
