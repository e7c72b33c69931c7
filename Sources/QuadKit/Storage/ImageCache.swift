import Foundation
import QuadCore

/// Images by URL: in memory (bounded by total bytes) and on disk (bounded by total size, least recently
/// used out first). Concurrent requests for one image share one download.
public actor ImageCache {
    public struct Limits: Sendable {
        public var memoryBytes: Int
        public var diskBytes: Int
        public init(memoryBytes: Int = 32 * 1024 * 1024, diskBytes: Int = 256 * 1024 * 1024) {
            self.memoryBytes = memoryBytes
            self.diskBytes = diskBytes
        }
    }

    private struct DiskIndexEntry: Codable {
        var file: String
        var size: Int
        var lastUsed: Double
    }

    let directory: URL?
    let limits: Limits
    let clock: any KitClock
    private let download: @Sendable (URL) async throws -> Data
    /// Memory: bytes by URL, with a use counter for least-recently-used order.
    private var memory: [URL: (data: Data, used: UInt64)] = [:]
    private var memoryCost = 0
    private var useCounter: UInt64 = 0
    private var disk: [String: DiskIndexEntry] = [:]
    private var inFlight: [URL: Task<Data, any Error>] = [:]
    /// Downloads started (each shared by every request that came while it ran).
    public private(set) var downloads = 0

    public init(
        directory: URL?, limits: Limits = Limits(), clock: any KitClock = SystemClock(),
        download: @escaping @Sendable (URL) async throws -> Data
    ) {
        self.directory = directory
        self.limits = limits
        self.clock = clock
        self.download = download
        if let directory, let data = try? Data(contentsOf: directory.appendingPathComponent("index.json")),
            let index = try? JSONDecoder().decode([String: DiskIndexEntry].self, from: data)
        {
            disk = index
        }
    }

    /// A cache that downloads through `client` (with its retries).
    public init(client: QuadClient, directory: URL?, limits: Limits = Limits()) {
        self.init(directory: directory, limits: limits, clock: client.clock) { try await client.download($0) }
    }

    /// The image's bytes: from memory, else disk, else one shared download.
    public func image(_ url: URL) async throws -> Data {
        if let hit = memory[url] {
            touchMemory(url, hit.data)
            // A use from memory counts for the disk's least-recently-used order too.
            disk[Self.key(url)]?.lastUsed = clock.now.timeIntervalSince1970 + tieBreak()
            return hit.data
        }
        if let data = readDisk(url) {
            putMemory(url, data)
            return data
        }
        if let running = inFlight[url] { return try await running.value }
        downloads += 1
        let download = download
        let task = Task { try await download(url) }
        inFlight[url] = task
        defer { inFlight[url] = nil }
        let data = try await task.value
        putMemory(url, data)
        writeDisk(url, data)
        return data
    }

    public func isInMemory(_ url: URL) -> Bool { memory[url] != nil }
    public func isOnDisk(_ url: URL) -> Bool { disk[Self.key(url)] != nil }
    public var memoryBytes: Int { memoryCost }
    public var diskBytes: Int { disk.values.reduce(0) { $0 + $1.size } }

    /// Empties memory (as when the system warns of low memory); the disk copy stays.
    public func clearMemory() {
        memory = [:]
        memoryCost = 0
    }

    // MARK: Memory

    private func touchMemory(_ url: URL, _ data: Data) {
        useCounter += 1
        memory[url] = (data, useCounter)
    }

    private func putMemory(_ url: URL, _ data: Data) {
        guard data.count <= limits.memoryBytes else { return }
        if let old = memory[url] { memoryCost -= old.data.count }
        touchMemory(url, data)
        memoryCost += data.count
        while memoryCost > limits.memoryBytes,
            let oldest = memory.min(by: { $0.value.used < $1.value.used })
        {
            memory[oldest.key] = nil
            memoryCost -= oldest.value.data.count
        }
    }

    // MARK: Disk

    static func key(_ url: URL) -> String { url.absoluteString }

    private static func fileName(_ url: URL) -> String {
        // A stable name from the URL (FNV-1a, 64 bits), keeping the extension.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in url.absoluteString.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let ext = url.pathExtension.isEmpty ? "img" : url.pathExtension
        return String(hash, radix: 16) + "." + ext
    }

    private func readDisk(_ url: URL) -> Data? {
        guard let directory, var entry = disk[Self.key(url)] else { return nil }
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(entry.file)) else {
            disk[Self.key(url)] = nil
            return nil
        }
        entry.lastUsed = clock.now.timeIntervalSince1970 + tieBreak()
        disk[Self.key(url)] = entry
        saveIndex()
        return data
    }

    private func writeDisk(_ url: URL, _ data: Data) {
        guard let directory, data.count <= limits.diskBytes else { return }
        let file = Self.fileName(url)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try data.write(to: directory.appendingPathComponent(file), options: .atomic)
        } catch {
            return
        }
        disk[Self.key(url)] = DiskIndexEntry(
            file: file, size: data.count, lastUsed: clock.now.timeIntervalSince1970 + tieBreak())
        var total = diskBytes
        while total > limits.diskBytes, let oldest = disk.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(oldest.value.file))
            disk[oldest.key] = nil
            total -= oldest.value.size
        }
        saveIndex()
    }

    /// Keeps uses within one clock tick in order.
    private func tieBreak() -> Double {
        useCounter += 1
        return Double(useCounter) * 1e-6
    }

    private func saveIndex() {
        guard let directory, let data = try? JSONEncoder().encode(disk) else { return }
        try? data.write(to: directory.appendingPathComponent("index.json"), options: .atomic)
    }
}
