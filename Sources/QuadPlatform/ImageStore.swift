import Crypto
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import OpenAPIRuntime
import QuadCore
import SQLKit

/// An image kept in the database and served at `/images/{sha256}.{ext}`: the URL names the bytes,
/// so it can be cached forever.
public struct StoredImage: Sendable, Equatable {
    public let sha256: String
    public let format: ImageFormat
    public let size: Int

    public var path: String { "/images/\(sha256).\(format.fileExtension)" }
}

/// Images in table `images`, with a small memory cache of the ones recently served.
public final class ImageStore: Sendable {
    public static let maxSize = BodyLimit.upload
    package let database: Database
    package let clock: any QuadClock
    private let cache = NIOLockedValueBox<[String: (ImageFormat, ByteBuffer)]>([:])
    private let cacheLimit = 256

    package init(database: Database, clock: any QuadClock) {
        self.database = database
        self.clock = clock
    }

    package static let migration = Migration(id: 4, name: "images") { sql, engine in
        let blob = engine == .postgres ? "BYTEA" : "BLOB"
        try await sql.raw(
            """
            CREATE TABLE images (
                sha256 TEXT PRIMARY KEY, format TEXT NOT NULL, size INTEGER NOT NULL,
                bytes \(unsafeRaw: blob) NOT NULL, created_at TEXT NOT NULL)
            """
        ).run()
    }

    /// Stores the bytes when they are a whole JPEG, PNG or WebP of at most 5 MiB and 40 million pixels; storing the same bytes twice is harmless.
    public func store(_ bytes: [UInt8]) async throws -> StoredImage {
        guard bytes.count <= Self.maxSize else { throw Problem.tooLarge(limit: Self.maxSize) }
        guard let header = ImageHeader(bytes) else {
            throw Problem(
                .unsupportedMediaType, type: "unsupported-image", title: "Unsupported image",
                detail: "Only JPEG, PNG and WebP images are accepted; these bytes are none of them.")
        }
        guard header.pixels <= ImageHeader.maxPixels else {
            throw Problem(
                .unprocessableContent, type: "image-too-large", title: "Image too large",
                detail: "This image is \(header.width) × \(header.height) pixels; at most "
                    + "\(ImageHeader.maxPixels / 1_000_000) million pixels are accepted.")
        }
        let format = header.format
        let sha = SHA256.hash(data: bytes).hex
        let now = Timestamp.string(clock.now)
        try await database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO images (sha256, format, size, bytes, created_at)
                VALUES (\(bind: sha), \(bind: format.rawValue), \(bind: bytes.count), \(bind: Data(bytes)), \(bind: now))
                ON CONFLICT (sha256) DO NOTHING
                """
            ).run()
        }
        return StoredImage(sha256: sha, format: format, size: bytes.count)
    }

    /// The bytes of an uploaded body, refused with 413 past the limit.
    package static func collect(_ body: HTTPBody) async throws -> [UInt8] {
        do {
            return try await [UInt8](collecting: body, upTo: maxSize)
        } catch {
            throw Problem.tooLarge(limit: maxSize)
        }
    }

    public func find(sha256: String) async throws -> (ImageFormat, ByteBuffer)? {
        if let hit = cache.withLockedValue({ $0[sha256] }) { return hit }
        let row = try await database.withConnection { sql in
            try await sql.raw("SELECT format, bytes FROM images WHERE sha256 = \(bind: sha256)").first()
        }
        guard let row, let format = ImageFormat(rawValue: try row.decode(column: "format", as: String.self)) else {
            return nil
        }
        let bytes = ByteBuffer(data: try row.decode(column: "bytes", as: Data.self))
        cache.withLockedValue { cache in
            if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[sha256] = (format, bytes)
        }
        return (format, bytes)
    }
}

extension ImageStore {
    /// The bytes of a picture a module ships (`resources` in Package.swift), by its path in `bundle`.
    package static func shipped(_ path: String, in bundle: Bundle) throws -> [UInt8] {
        guard let url = bundle.resourceURL?.appendingPathComponent(path), let data = try? Data(contentsOf: url)
        else { throw StartupError(description: "\(path) is missing from the build.") }
        return [UInt8](data)
    }
}
