import Foundation

/// Where and how often Quad copies its SQLite database by itself.
public struct BackupSettings: Sendable, Equatable {
    /// `QUAD_BACKUP_DIR`: an existing folder Quad may write in.
    public var directory: String
    /// `QUAD_BACKUP_EVERY` (`30m`, `6h`, `1d`; default a day).
    public var every: Duration = .seconds(86400)
    /// `QUAD_BACKUP_KEEP`: the newest copies kept (default 7).
    public var keep = 7

    public init(directory: String) { self.directory = directory }
}

extension ServerConfiguration {
    mutating func readBackups(
        raw: (Setting) -> (value: String, name: String)?,
        parse: (Setting, String, (String) -> String?) throws -> String?
    ) throws {
        guard
            let directory = try parse(
                .backupDirectory, "an existing folder Quad may write in",
                { FileManager.default.isWritableFile(atPath: $0) ? $0 : nil })
        else {
            for setting in [Setting.backupEvery, .backupKeep] where raw(setting) != nil {
                throw ConfigurationError(setting: setting.variable, message: "it needs QUAD_BACKUP_DIR")
            }
            return
        }
        guard case .sqlite = database else {
            throw ConfigurationError(
                setting: Setting.backupDirectory.variable,
                message: "Quad copies a SQLite file; on PostgreSQL use pg_dump (see \"Backups\" in the README)")
        }
        var settings = BackupSettings(directory: directory)
        if let every = try parse(
            .backupEvery, "a length such as 30m, 6h or 1d (at least 1m)", { Self.parseEvery($0).map(String.init) })
        {
            settings.every = .seconds(Int(every) ?? 86400)
        }
        if let keep = try parse(
            .backupKeep, "a whole number of copies from 1 to 1000",
            { Int($0).flatMap { (1...1000).contains($0) ? String($0) : nil } })
        {
            settings.keep = Int(keep) ?? settings.keep
        }
        backups = settings
    }

    /// `30m`, `6h`, `1d` in seconds.
    static func parseEvery(_ text: String) -> Int? {
        guard let unit = text.last, let count = Int(text.dropLast()), count >= 1 else { return nil }
        switch unit {
        case "m": return count * 60
        case "h": return count * 3600
        case "d": return count * 86400
        default: return nil
        }
    }
}
