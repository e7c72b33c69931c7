import ArgumentParser

@main
struct Quad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quad",
        abstract: "Quad: rooms, specials, library and timetable in one server.",
        discussion: """
            Client commands talk to --server (default http://127.0.0.1:8080). Errors are one line on stderr;
            exit codes: 1 failed, 2 usage, 3 offline (reads then show cached data with its age; writes refuse).
            """,
        // Client commands for Specials, Library and Timetable slot in here (see Sources/quad/Client).
        subcommands: [
            Serve.self, Login.self, Logout.self, RoomsCommand.self, BookCommand.self, CancelCommand.self, Watch.self,
            LibraryCommand.self, SpecialsCommand.self, TimetableCommand.self,
        ],
        defaultSubcommand: nil
    )
}
