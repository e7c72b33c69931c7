import Foundation

/// The last good response of each resource, kept on disk so an app opens with data at once and works
/// offline. Each resource is one JSON file, written atomically (a crash never leaves half a file).
public struct OfflineStore: Sendable {
    /// What is kept for a resource: the value and when it was fetched.
    public struct Entry<Value: Codable & Sendable>: Codable, Sendable {
        public var value: Value
        public var savedAt: Date
        public var etag: String?
    }

    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// `~/Library/Caches/Quad` on Apple platforms, `$XDG_CACHE_HOME/quad` (or `~/.cache/quad`) elsewhere,
    /// in a folder per server.
    public static func defaultDirectory(server: URL) -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let custom = environment["QUAD_CACHE_DIR"], !custom.isEmpty {
            base = URL(fileURLWithPath: custom)
        } else if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            base = URL(fileURLWithPath: xdg).appendingPathComponent("quad")
        } else {
            #if canImport(Darwin)
                base = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0]
                    .appendingPathComponent("Quad")
            #else
                base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/quad")
            #endif
        }
        return base.appendingPathComponent(safeName(server.absoluteString))
    }

    /// The folder for the client's ETag cache (`QuadClient.Options.cacheDirectory`), inside this store's.
    public var httpCacheDirectory: URL { directory.appendingPathComponent("http", isDirectory: true) }

    static func safeName(_ key: String) -> String {
        String(key.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" })
    }

    func file(_ key: String) -> URL { directory.appendingPathComponent(Self.safeName(key) + ".json") }

    public func save<Value: Codable & Sendable>(
        _ value: Value, for key: String, at date: Date, etag: String? = nil
    )
        throws
    {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(Entry(value: value, savedAt: date, etag: etag))
        try data.write(to: file(key), options: .atomic)
    }

    /// The saved value, or nil when there is none or it cannot be read (an old format, a damaged file).
    public func load<Value: Codable & Sendable>(_: Value.Type, for key: String) -> Entry<Value>? {
        guard let data = try? Data(contentsOf: file(key)) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(Entry<Value>.self, from: data)
    }

    public func remove(_ key: String) {
        try? FileManager.default.removeItem(at: file(key))
    }

    /// Removes every resource whose key starts with `prefix` (`timetable` takes every day's timetable).
    public func remove(prefix: String) {
        let start = Self.safeName(prefix)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in files where name.hasPrefix(start) && name.hasSuffix(".json") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }
}
