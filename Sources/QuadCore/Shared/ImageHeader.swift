/// What an uploaded file really is: its format and its size in pixels, read from its structure, not from its
/// first bytes only. A PNG is a chain of chunks from `IHDR` to a final `IEND`; a JPEG a chain of segments up
/// to a frame header, ending with `EOI`; a WebP a RIFF container whose length is the file's. A file that
/// starts like an image and goes on as something else (HTML after a PNG signature) is none of them.
public struct ImageHeader: Sendable, Equatable {
    public let format: ImageFormat
    public let width: Int
    public let height: Int

    /// The most pixels an image may have: a 8000 × 5000 photo, far beyond any tile or room photo.
    public static let maxPixels = 40_000_000

    public var pixels: Int { width * height }

    public init?(_ bytes: [UInt8]) {
        guard let format = ImageFormat(sniffing: bytes) else { return nil }
        let size: (Int, Int)?
        switch format {
        case .png: size = Self.png(bytes)
        case .jpeg: size = Self.jpeg(bytes)
        case .webp: size = Self.webp(bytes)
        }
        guard let (width, height) = size, width > 0, height > 0 else { return nil }
        self.format = format
        self.width = width
        self.height = height
    }

    private static func bigEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int? {
        guard at >= 0, at + count <= bytes.count else { return nil }
        return bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) }
    }

    private static func littleEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int? {
        guard at >= 0, at + count <= bytes.count else { return nil }
        return bytes[at..<at + count].reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// Chunks after the 8-byte signature: length, type, data, CRC. `IHDR` first, `IEND` last and at the end.
    private static func png(_ bytes: [UInt8]) -> (Int, Int)? {
        var at = 8
        var size: (Int, Int)?
        while let length = bigEndian(bytes, at, 4), length <= Int(Int32.max), at + 12 + length <= bytes.count {
            let type = String(decoding: bytes[at + 4..<at + 8], as: UTF8.self)
            guard type.utf8.allSatisfy({ ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }) else { return nil }
            if at == 8 {
                guard type == "IHDR", length == 13, let width = bigEndian(bytes, at + 8, 4),
                    let height = bigEndian(bytes, at + 12, 4)
                else { return nil }
                size = (width, height)
            }
            at += 12 + length
            if type == "IEND" { return at == bytes.count ? size : nil }
        }
        return nil
    }

    /// Segments after `FF D8`: each `FF xx` with a length, until a start-of-frame (its height and width);
    /// the file must end with `FF D9`.
    private static func jpeg(_ bytes: [UInt8]) -> (Int, Int)? {
        guard bytes.count >= 4, bytes[bytes.count - 2] == 0xFF, bytes[bytes.count - 1] == 0xD9 else { return nil }
        var at = 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return nil }
            let marker = bytes[at + 1]
            if marker == 0xFF {
                at += 1
                continue
            }
            guard let length = bigEndian(bytes, at + 2, 2), length >= 2 else { return nil }
            let isFrame = (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker)
            if isFrame {
                guard let height = bigEndian(bytes, at + 5, 2), let width = bigEndian(bytes, at + 7, 2) else {
                    return nil
                }
                return (width, height)
            }
            at += 2 + length
        }
        return nil
    }

    /// `RIFF` with the file's length, `WEBP`, then a `VP8 `, `VP8L` or `VP8X` chunk that gives the canvas.
    private static func webp(_ bytes: [UInt8]) -> (Int, Int)? {
        guard let riff = littleEndian(bytes, 4, 4), riff + 8 == bytes.count, bytes.count >= 30 else { return nil }
        switch String(decoding: bytes[12..<16], as: UTF8.self) {
        case "VP8 ":
            guard bytes[23] == 0x9D, bytes[24] == 0x01, bytes[25] == 0x2A,
                let width = littleEndian(bytes, 26, 2), let height = littleEndian(bytes, 28, 2)
            else { return nil }
            return (width & 0x3FFF, height & 0x3FFF)
        case "VP8L":
            guard bytes[20] == 0x2F, let bits = littleEndian(bytes, 21, 4) else { return nil }
            return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            guard let width = littleEndian(bytes, 24, 3), let height = littleEndian(bytes, 27, 3) else { return nil }
            return (width + 1, height + 1)
        default:
            return nil
        }
    }
}
