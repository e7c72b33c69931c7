// PNGEncoderTests.swift
//
// Checks PNGEncoder and DemoPhotos against a small, independent PNG reader written below
// (chunk parsing, inflate for stored and fixed-Huffman blocks, all five PNG row filters).

import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite("PNGEncoder")
struct PNGEncoderTests {
    @Test("CRC-32 matches the standard check value")
    func crc32CheckValue() {
        #expect(PNGEncoder.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(PNGEncoder.crc32([]) == 0)
    }

    @Test("Adler-32 matches known values")
    func adler32KnownValues() {
        #expect(PNGEncoder.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
        #expect(PNGEncoder.adler32([]) == 1)
        // Long input exercises the deferred modulo; compare with a step-by-step reference.
        let long = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 ^ 0xA5) }
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in long {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        #expect(PNGEncoder.adler32(long) == b << 16 | a)
    }

    @Test("A 3×2 image round-trips exactly")
    func tinyImageRoundTrips() throws {
        let rgb: [UInt8] = [
            255, 0, 0, 0, 255, 0, 0, 0, 255,
            10, 20, 30, 255, 255, 255, 0, 0, 0,
        ]
        let png = PNGEncoder.encode(width: 3, height: 2, rgb: rgb)
        #expect(Array(png.prefix(8)) == TestPNG.signature)
        let image = try TestPNG.decode(png)
        #expect(image.width == 3)
        #expect(image.height == 2)
        #expect(image.rgb == rgb)
        #expect(image.chunkTypes == ["IHDR", "IDAT", "IEND"])
    }

    @Test("Larger images round-trip: gradients, flat areas, noise, 1×1")
    func largerImagesRoundTrip() throws {
        var random = TestRandom(state: 42)
        let cases: [(width: Int, height: Int, pixel: (Int, Int) -> [UInt8])] = [
            (1, 1, { _, _ in [1, 2, 3] }),
            (300, 200, { x, y in [UInt8(x * 255 / 299), UInt8(y * 255 / 199), UInt8((x ^ y) & 0xFF)] }),
            (257, 130, { x, y in x < 128 ? [77, 77, 77] : [UInt8(y), 200, UInt8(x & 0xFF)] }),
            (64, 64, { _, _ in [random.byte(), random.byte(), random.byte()] }),
        ]
        for (width, height, pixel) in cases {
            var rgb: [UInt8] = []
            for y in 0..<height {
                for x in 0..<width {
                    rgb += pixel(x, y)
                }
            }
            let image = try TestPNG.decode(PNGEncoder.encode(width: width, height: height, rgb: rgb))
            #expect(image.width == width && image.height == height)
            #expect(image.rgb == rgb, "\(width)×\(height) image did not round-trip")
        }
    }

    @Test("zlib stream round-trips for edge-case inputs")
    func zlibRoundTrips() throws {
        var random = TestRandom(state: 7)
        let noise = (0..<50_000).map { _ in random.byte() }
        let block = (0..<1_000).map { _ in random.byte() }
        let inputs: [[UInt8]] = [
            [],
            [42],
            [1, 2],
            [UInt8](repeating: 0, count: 100_000),  // runs of maximal (258-byte) matches
            noise,  // mostly literals
            Array((0..<40).map { _ in block }.joined()),  // repeats at distance 1000
            Array((0..<3).map { _ in noise }.joined()),  // repeats beyond the 32 KiB window
            Array("the quick brown fox jumps over the lazy dog; the quick brown fox".utf8),
        ]
        for input in inputs {
            let stream = PNGEncoder.zlibCompress(input)
            #expect(try TestPNG.zlibDecompress(stream) == input, "\(input.count)-byte input did not round-trip")
        }
    }

    @Test("Flat images compress well")
    func flatImageIsSmall() {
        let rgb = [UInt8](repeating: 200, count: 480 * 322 * 3)
        #expect(PNGEncoder.encode(width: 480, height: 322, rgb: rgb).count < 5_000)
    }
}

@Suite("DemoPhotos")
struct DemoPhotosTests {
    @Test("Rooms are valid PNGs with the requested size", arguments: [(480, 322), (328, 220), (200, 150)])
    func roomHeader(width: Int, height: Int) throws {
        let png = DemoPhotos.room(seed: 3, width: width, height: height)
        #expect(Array(png.prefix(8)) == TestPNG.signature)
        #expect(Array(png[12..<16]) == Array("IHDR".utf8))
        #expect(TestPNG.bigEndian(png, at: 16) == width)
        #expect(TestPNG.bigEndian(png, at: 20) == height)
        let image = try TestPNG.decode(png)
        #expect(image.rgb.count == width * height * 3)
    }

    @Test("Default room size is 480×322")
    func defaultSize() throws {
        let image = try TestPNG.decode(DemoPhotos.room(seed: 0))
        #expect(image.width == 480)
        #expect(image.height == 322)
    }

    @Test("Same seed gives identical bytes; different seeds differ; rooms stay under 40 KB")
    func roomDeterminismAndSize() {
        let rooms = (0..<8).map { DemoPhotos.room(seed: $0) }
        #expect(rooms[5] == DemoPhotos.room(seed: 5))
        #expect(Set(rooms).count == rooms.count)
        #expect(DemoPhotos.room(seed: -1) != DemoPhotos.room(seed: 1))
        for (seed, room) in rooms.enumerated() {
            #expect(room.count < 40_000, "seed \(seed): \(room.count) bytes")
        }
    }

    @Test("Tiles: every letter A–Z renders, distinctly and deterministically")
    func tiles() throws {
        var seen = Set<[UInt8]>()
        for (index, letter) in "ABCDEFGHIJKLMNOPQRSTUVWXYZ".enumerated() {
            let png = DemoPhotos.tile(letter: letter, hue: Double(index) / 26, size: 96)
            let image = try TestPNG.decode(png)
            #expect(image.width == 96 && image.height == 96)
            seen.insert(image.rgb)
        }
        #expect(seen.count == 26)
        let a = DemoPhotos.tile(letter: "A", hue: 0.3, size: 64)
        #expect(a == DemoPhotos.tile(letter: "A", hue: 0.3, size: 64))
        #expect(a == DemoPhotos.tile(letter: "a", hue: 0.3, size: 64))
        #expect(a != DemoPhotos.tile(letter: "B", hue: 0.3, size: 64))
        #expect(a != DemoPhotos.tile(letter: "A", hue: 0.6, size: 64))
        #expect(try TestPNG.decode(DemoPhotos.tile(letter: "7", hue: 0.5, size: 32)).width == 32)
    }
}

// MARK: - Independent PNG reader

private struct TestRandom {
    var state: UInt64

    mutating func byte() -> UInt8 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
}

private enum TestPNG {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    struct Image {
        var width: Int
        var height: Int
        var rgb: [UInt8]
        var chunkTypes: [String]
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func bigEndian(_ bytes: [UInt8], at offset: Int) -> Int {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    }

    /// Parses chunks (checking CRCs), inflates IDAT and undoes the row filters of an 8-bit RGB PNG.
    static func decode(_ png: [UInt8]) throws -> Image {
        guard png.count >= 8, Array(png.prefix(8)) == signature else { throw Malformed("signature") }
        var offset = 8
        var header: [UInt8] = []
        var idat: [UInt8] = []
        var types: [String] = []
        while offset + 12 <= png.count {
            let length = bigEndian(png, at: offset)
            guard offset + 12 + length <= png.count else { throw Malformed("truncated chunk") }
            let typeAndData = Array(png[offset + 4..<offset + 8 + length])
            guard PNGEncoder.crc32(typeAndData) == UInt32(bigEndian(png, at: offset + 8 + length)) else {
                throw Malformed("chunk CRC")
            }
            let type = String(decoding: typeAndData.prefix(4), as: UTF8.self)
            types.append(type)
            let data = Array(typeAndData.dropFirst(4))
            if type == "IHDR" { header = data }
            if type == "IDAT" { idat += data }
            offset += 12 + length
        }
        guard offset == png.count, types.first == "IHDR", types.last == "IEND", header.count == 13 else {
            throw Malformed("chunk layout")
        }
        let width = bigEndian(header, at: 0)
        let height = bigEndian(header, at: 4)
        guard Array(header[8...]) == [8, 2, 0, 0, 0] else { throw Malformed("not 8-bit RGB") }

        let raw = try zlibDecompress(idat)
        let stride = width * 3
        guard raw.count == height * (stride + 1) else { throw Malformed("IDAT size") }
        var rgb = [UInt8](repeating: 0, count: height * stride)
        for y in 0..<height {
            let filter = raw[y * (stride + 1)]
            for i in 0..<stride {
                let value = raw[y * (stride + 1) + 1 + i]
                let a = i >= 3 ? Int(rgb[y * stride + i - 3]) : 0
                let b = y > 0 ? Int(rgb[(y - 1) * stride + i]) : 0
                let c = i >= 3 && y > 0 ? Int(rgb[(y - 1) * stride + i - 3]) : 0
                let predictor: Int
                switch filter {
                case 0: predictor = 0
                case 1: predictor = a
                case 2: predictor = b
                case 3: predictor = (a + b) / 2
                case 4:
                    let p = a + b - c
                    let (pa, pb, pc) = (abs(p - a), abs(p - b), abs(p - c))
                    predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                default: throw Malformed("filter type \(filter)")
                }
                rgb[y * stride + i] = value &+ UInt8(predictor)
            }
        }
        return Image(width: width, height: height, rgb: rgb, chunkTypes: types)
    }

    /// zlib wrapper: header check, inflate, Adler-32 check.
    static func zlibDecompress(_ stream: [UInt8]) throws -> [UInt8] {
        guard stream.count >= 6, stream[0] & 0x0F == 8, (Int(stream[0]) << 8 | Int(stream[1])) % 31 == 0,
            stream[1] & 0x20 == 0
        else { throw Malformed("zlib header") }
        var reader = BitReader(bytes: stream, position: 16)
        let output = try inflate(&reader)
        let trailer = (reader.position + 7) / 8
        guard trailer + 4 == stream.count else { throw Malformed("trailing bytes") }
        guard PNGEncoder.adler32(output) == UInt32(bigEndian(stream, at: trailer)) else { throw Malformed("Adler-32") }
        return output
    }

    private static let lengthBase = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
        35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
    ]
    private static let lengthExtra = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
        3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]
    private static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385,
        513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ]
    private static let distanceExtra = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7,
        8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]

    /// DEFLATE decoder for stored (BTYPE=00) and fixed-Huffman (BTYPE=01) blocks.
    private static func inflate(_ reader: inout BitReader) throws -> [UInt8] {
        var out: [UInt8] = []
        var final = false
        while !final {
            final = try reader.bits(1) == 1
            switch try reader.bits(2) {
            case 0:
                reader.position = (reader.position + 7) / 8 * 8
                let length = try reader.bits(16)
                guard try reader.bits(16) == length ^ 0xFFFF else { throw Malformed("stored LEN/NLEN") }
                for _ in 0..<length { out.append(UInt8(try reader.bits(8))) }
            case 1:
                while true {
                    let symbol = try fixedLiteralOrLength(&reader)
                    if symbol < 256 {
                        out.append(UInt8(symbol))
                        continue
                    }
                    if symbol == 256 { break }
                    guard symbol <= 285 else { throw Malformed("length symbol \(symbol)") }
                    let length = lengthBase[symbol - 257] + (try reader.bits(lengthExtra[symbol - 257]))
                    let code = try reader.huffmanBits(5)
                    guard code < 30 else { throw Malformed("distance code \(code)") }
                    let distance = distanceBase[code] + (try reader.bits(distanceExtra[code]))
                    guard distance <= out.count else { throw Malformed("distance too far back") }
                    for _ in 0..<length { out.append(out[out.count - distance]) }
                }
            default:
                throw Malformed("unsupported block type")
            }
        }
        return out
    }

    /// Fixed literal/length code (RFC 1951, 3.2.6): 7, 8 or 9 bits, read most-significant bit first.
    private static func fixedLiteralOrLength(_ reader: inout BitReader) throws -> Int {
        var code = try reader.huffmanBits(7)
        if code <= 0b001_0111 { return 256 + code }
        code = code << 1 | (try reader.bits(1))
        if (0x30...0xBF).contains(code) { return code - 0x30 }
        if (0xC0...0xC7).contains(code) { return 280 + code - 0xC0 }
        code = code << 1 | (try reader.bits(1))
        guard (0x190...0x1FF).contains(code) else { throw Malformed("literal code") }
        return 144 + code - 0x190
    }

    private struct BitReader {
        let bytes: [UInt8]
        var position: Int  // in bits

        /// `count` bits as a little-endian number (DEFLATE's order for everything but Huffman codes).
        mutating func bits(_ count: Int) throws -> Int {
            var value = 0
            for i in 0..<count {
                guard position / 8 < bytes.count else { throw Malformed("unexpected end of data") }
                value |= Int(bytes[position / 8] >> UInt8(position % 8) & 1) << i
                position += 1
            }
            return value
        }

        /// `count` bits with the first one most significant, as Huffman codes are packed.
        mutating func huffmanBits(_ count: Int) throws -> Int {
            var value = 0
            for _ in 0..<count { value = value << 1 | (try bits(1)) }
            return value
        }
    }
}
