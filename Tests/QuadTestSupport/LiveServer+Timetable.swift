import Logging
import QuadPlatform
import QuadServer
import SQLKit

extension LiveServer {
    /// Takes the timetable's enrolments away under the running server, so that every timetable read fails
    /// with a 500, as the original app's clients test.
    public func breakTheTimetable() async throws {
        let database = try await Database.open(.sqlite(path: databasePath), logger: Logger(label: "kit-test"))
        try await database.withConnection { try await $0.raw("DROP TABLE timetable_enrolments").run() }
        await database.close()
    }
}
