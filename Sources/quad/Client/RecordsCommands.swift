import ArgumentParser
import Foundation
import QuadCore
import QuadKit

/// `quad import rooms rooms.csv`: an admin's file of rooms, people or books, applied all at once or not at all; and
/// `quad import gtfs feed.zip`, a transit operator's feed, which replaces the one before.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Add and change rooms, people or books from a CSV file, or load a GTFS feed (admins): all of it, or none.",
        discussion: """
            The columns are those `quad export` writes, in any order. Quad checks every row first; when any is \
            wrong it applies nothing and names each row (the header is row 1) and column at fault. Sending the \
            same file again changes nothing. `quad import gtfs feed.zip` loads a transit operator's GTFS feed \
            (the ZIP as published), which replaces the one before: the shuttles' departures come from it.
            """)

    @OptionGroup var options: ClientOptions
    @Argument(help: "rooms, people, books or gtfs.") var kind: String
    @Argument(help: "The CSV file, or the feed's ZIP (- for standard input).") var file: String

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let data: Data
            do {
                data =
                    file == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw CLIError.failed("cannot read \(file)")
            }
            do {
                if kind == "gtfs" {
                    let feed = try await context.client.importGTFS(zip: data)
                    if context.json {
                        try context.printJSON(feed)
                    } else {
                        print(
                            "gtfs: \(feed.agency): \(feed.stops) stops, \(feed.services) services, \(feed.calls) calls")
                    }
                    return
                }
                let summary = try await context.client.importRecords(kind, csv: data)
                if context.json {
                    try context.printJSON(summary)
                } else {
                    print("\(kind): \(summary.added) added, \(summary.changed) changed, \(summary.unchanged) unchanged")
                }
            } catch let error as KitError {
                guard case .invalid(_, let errors) = error, !errors.isEmpty else { throw error }
                // One line per row at fault: a file's errors are read down a list, as a spreadsheet's rows are.
                var lines = ["quad: nothing was imported: \(errors.count == 1 ? "1 error" : "\(errors.count) errors")"]
                for error in errors {
                    let place = [error.row.map { "row \($0)" }, error.field.isEmpty ? nil : error.field]
                        .compactMap { $0 }.joined(separator: ", ")
                    lines.append("  " + oneLine(place.isEmpty ? error.message : "\(place): \(error.message)"))
                }
                FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
                throw ExitCode(1)
            }
        }
    }
}

/// `quad export books > books.csv`.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every room, person or book as a CSV file (admins), as `quad import` reads it.")

    @OptionGroup var options: ClientOptions
    @Argument(help: "rooms, people, books, or bookings.") var kind: String
    @Option(name: [.customShort("o"), .long], help: "The file to write (standard output when absent).")
    var output: String?

    func run() async throws {
        try await runClient {
            let context = try ClientContext(options, signedIn: true)
            let data = try await context.client.exportRecords(kind)
            guard let output else {
                FileHandle.standardOutput.write(data)
                return
            }
            do {
                try data.write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw CLIError.failed("cannot write \(output)")
            }
        }
    }
}
