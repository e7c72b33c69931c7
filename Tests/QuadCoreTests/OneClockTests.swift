import Foundation
import Testing

/// The server, the kit and the command line read the wall clock only through the injected clock (`QuadClock`), so
/// that tests choose their time: nothing in `Sources` outside `QuadCore/Time` reads it directly.
@Suite struct OneClockTests {
    /// The ways Swift and Foundation read the wall clock.
    static let readings = [
        "Date()", "Date.now", "Date.init()", "Date(timeIntervalSinceNow", ".timeIntervalSinceNow", "= Date.init",
        "CFAbsoluteTimeGetCurrent", "gettimeofday", "time(nil)", "DispatchWallTime.now",
    ]

    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// Whether `code` holds `reading` as a name of its own: `clearStartDate()` (SwiftProtobuf's, for a GTFS-Realtime
    /// field) does not read the clock.
    static func reads(_ code: String, _ reading: String) -> Bool {
        var rest = code[...]
        while let found = rest.range(of: reading) {
            let before = found.lowerBound > code.startIndex ? code[code.index(before: found.lowerBound)] : " "
            if !(before.isLetter || before.isNumber || before == "_") || !(reading.first?.isLetter ?? false) {
                return true
            }
            rest = code[found.upperBound...]
        }
        return false
    }

    @Test func aNameEndingInDateIsNoReading() {
        #expect(Self.reads("let now = Date()", "Date()"))
        #expect(Self.reads("f(Date())", "Date()"))
        #expect(!Self.reads("mutating func clearStartDate() {", "Date()"))
        #expect(Self.reads("x.clearStartDate(); y = Date()", "Date()"))
    }

    @Test func onlyTheClockReadsTheWallClock() throws {
        let files = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
        var found: [String] = []
        var checked = 0
        for case let url as URL in files where url.pathExtension == "swift" {
            let path = url.path.replacingOccurrences(of: Self.sources.path + "/", with: "")
            if path.hasPrefix("QuadCore/Time/") { continue }
            checked += 1
            let lines = try String(contentsOf: url, encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                for reading in Self.readings where Self.reads(String(code), reading) {
                    found.append("\(path):\(number + 1): \(reading)")
                }
            }
        }
        #expect(checked > 100, "the sources were found at \(Self.sources.path)")
        #expect(found.isEmpty, "read the injected clock instead:\n\(found.joined(separator: "\n"))")
    }
}
