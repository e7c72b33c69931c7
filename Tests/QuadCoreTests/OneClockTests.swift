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
                for reading in Self.readings where code.contains(reading) {
                    found.append("\(path):\(number + 1): \(reading)")
                }
            }
        }
        #expect(checked > 100, "the sources were found at \(Self.sources.path)")
        #expect(found.isEmpty, "read the injected clock instead:\n\(found.joined(separator: "\n"))")
    }
}
