import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
            Serve.self, BackupCommand.self, RestoreCommand.self, Login.self, Logout.self, RoomsCommand.self,
            BookCommand.self, CancelCommand.self,
            BookingsCommand.self, CheckinCommand.self, WaitCommand.self, OffersCommand.self, AcceptCommand.self,
            LeaveCommand.self, DismissCommand.self, TodayCommand.self, Watch.self,
            LibraryCommand.self, SpecialsCommand.self, TimetableCommand.self, StopsCommand.self, ImportCommand.self,
            ExportCommand.self,
        ],
        defaultSubcommand: nil
    )

    /// ArgumentParser's `main`, except that a usage error is one line on stderr (`quad: …`, exit 2) like every
    /// other error, rather than the message followed by the usage; `--help` still prints the help.
    static func main() async {
        do {
            var command = try await asyncParseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let code as ExitCode {
            // The command said what went wrong already.
            terminate(code.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            let message = message(for: error).split(whereSeparator: \.isNewline).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            .filter { !$0.isEmpty }.joined(separator: " ")
            FileHandle.standardError.write(Data("quad: \(message.isEmpty ? "\(error)" : message)\n".utf8))
            terminate(code == .validationFailure ? 2 : code.rawValue)
        }
    }
}

/// Ends the process (the global `exit`, which `Quad`'s own `exit(withError:)` hides inside the type).
private func terminate(_ code: Int32) -> Never {
    exit(code)
}
