import ArgumentParser
import Foundation
import QuadCore
import QuadKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `quad specials`: the mosaic, drawn as wide as the terminal (or `--width`).
struct SpecialsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "specials", abstract: "Draw today's specials as a mosaic, as wide as the terminal.")

    @OptionGroup var options: ClientOptions

    @Option(help: "Columns to draw in (default: the terminal's width, else $COLUMNS, else 80).")
    var width: Int?

    func validate() throws {
        if let width, width < 8 { throw ValidationError("--width must be 8 or more") }
    }

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options)
            let fetched = try await context.fetchOrCached("specials", noun: "specials") {
                try await context.client.specials().value
            }
            let list = fetched.value
            if context.json {
                struct Output: Encodable {
                    var specials: SpecialsList
                    var offline: Bool
                    var updatedAt: Date?
                }
                try context.printJSON(Output(specials: list, offline: fetched.offline, updatedAt: fetched.updatedAt))
                return
            }
            if fetched.offline { context.noteOffline("specials", savedAt: fetched.updatedAt) }
            context.print(SpecialsMosaic.render(list, width: width ?? Self.terminalWidth(), style: context.style))
        }
    }

    static func terminalWidth() -> Int {
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 {
            return columns
        }
        return 80
    }
}
