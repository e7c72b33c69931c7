import ArgumentParser
import Foundation
import QuadCore
import QuadKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `quad specials`: the mosaic (`show`, the default); `watch`, `unwatch` and `watched` for the products a person
/// wants to be told about.
struct SpecialsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "specials", abstract: "Today's specials, and the products you want to be told about.",
        subcommands: [SpecialsShow.self, SpecialsWatch.self, SpecialsUnwatch.self, SpecialsWatched.self],
        defaultSubcommand: SpecialsShow.self)
}

/// `quad specials [show]`: the mosaic, drawn as wide as the terminal (or `--width`).
struct SpecialsShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Draw today's specials as a mosaic, as wide as the terminal.")

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

/// `quad specials watch ID`: be told when the product next goes on special (on Today, and by mail).
struct SpecialsWatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Be told when a product next goes on special (its id, from `quad specials --json`).")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The special's id.")
    var id: String

    func run() async throws { try await setWatching(options, id: id, true) }
}

/// Starts or stops the signed-in person watching special `id`, and says so.
private func setWatching(_ options: ClientOptions, id: String, _ watching: Bool) async throws {
    try await runClient {
        let context = try ClientContext(options, signedIn: true)
        do { try await context.client.setWatching(specialId: id, watching) } catch {
            throw context.writeError(error, doing: watching ? "watch it" : "stop watching it")
        }
        context.print(
            watching
                ? "You will be told when it next goes on special (see `quad specials watched`).\n"
                : "You will not be told about it.\n")
    }
}

/// `quad specials unwatch ID`.
struct SpecialsUnwatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unwatch", abstract: "Stop being told about a product.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The special's id.")
    var id: String

    func run() async throws { try await setWatching(options, id: id, false) }
}

/// `quad specials watched`: the products you watch, their price, and whether each is on special now.
struct SpecialsWatched: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watched", abstract: "The products you watch, and which are on special now.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let (code, specials) = try await context.client.watchedSpecials()
            if context.json { return try context.printJSON(specials) }
            guard !specials.isEmpty else {
                return context.print(
                    "You watch no product: `quad specials watch ID` tells you when one goes on special.\n")
            }
            let currency = Currency(code: code)
            var table = TextTable(columns: [.init("ID"), .init("PRODUCT"), .init("PRICE", .right), .init("")])
            for special in specials {
                let reduced = special.prices.isReduced
                table.add([
                    .init(special.id, .dim), .init(SpecialsMosaic.fit(special.displayName, 40)),
                    .init(currency.format(special.price, language: .english), reduced ? .green : nil),
                    reduced
                        ? .init("on special, was \(currency.format(special.originalPrice, language: .english))") : "",
                ])
            }
            context.print(table.render(style: context.style))
        }
    }
}
