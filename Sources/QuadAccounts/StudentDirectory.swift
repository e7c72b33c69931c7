import Foundation
import QuadPlatform
import SQLKit

/// Whose account a student record is, for the Timetable's calendar feed. A part of Accounts built on its own, before
/// the Timetable: Accounts needs the Timetable (to end a person's feed keys), so neither could be handed the other
/// whole at construction.
package struct StudentDirectory: StudentAccounts {
    let database: Database

    package init(platform: Platform) {
        self.database = platform.database
    }

    package func username(ofStudent id: String) async throws -> String? {
        try await database.withConnection { sql in
            try await sql.raw("SELECT username FROM people WHERE student_id = \(bind: id)").first()?
                .decode(column: "username", as: String.self)
        }
    }
}
