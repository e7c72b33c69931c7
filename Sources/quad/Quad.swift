import ArgumentParser

@main
struct Quad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quad",
        abstract: "Quad: rooms, specials, library and timetable in one server.",
        subcommands: [Serve.self],
        defaultSubcommand: nil
    )
}
