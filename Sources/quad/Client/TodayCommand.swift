import ArgumentParser
import Foundation
import QuadCore
import QuadKit

/// `quad today`: your day, the same sections as your home page (what is held for you first), each item with the
/// command that acts on it.
struct TodayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "today",
        abstract: "Your day: what is held for you, your bookings, lines, loans, classes, shuttles and the specials.")

    @OptionGroup var options: ClientOptions

    @Option(help: "The language of its texts: en or fr (default en).")
    var language: String?

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let day: Today
            do { day = try await context.client.today(language: language) } catch {
                throw context.writeError(error, doing: "read your day")
            }
            if context.json { return try context.printJSON(day) }
            context.print(TerminalText.today(day, style: context.style))
        }
    }
}

extension TerminalText {
    /// Each section under its title, its items one a line (what to know after a colon), the commands that act on an
    /// item under it; a section with nothing says so.
    static func today(_ day: Today, style: TerminalStyle) -> String {
        var out = ""
        if day.needsYou > 0 {
            out += style.paint("\(day.needsYou) \(day.needsYou == 1 ? "thing needs" : "things need") you now", .green)
            out += "\n\n"
        }
        for section in day.sections {
            out += style.paint(visible(section.title), .bold) + "\n"
            if section.items.isEmpty { out += "  " + style.paint(visible(section.empty), .dim) + "\n" }
            for item in section.items {
                let detail = item.detail.map { ": " + visible($0) } ?? ""
                out += "  " + visible(item.title) + detail + "\n"
                let commands = item.actions.compactMap { command(for: $0, item: item) }
                if !commands.isEmpty { out += "    " + commands.joined(separator: " · ") + "\n" }
            }
        }
        return out
    }

    /// The command line's way to do what `action` does.
    static func command(for action: TodayAction, item: TodayItem) -> String? {
        switch action.kind {
        case .accept: "quad accept \(item.id)"
        case .decline, .leave: "quad leave -- \(item.id)"
        case .checkIn: "quad checkin"
        case .returnBook: "quad library return \(item.id)"
        case .dismiss: "quad dismiss \(item.id)"
        }
    }
}
