import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Which reminders a person turned off (table `reminders_off`), read and written for the Waiting feature. Here
/// rather than there because the engine's released migration (6) made the table with the lines', and a person's
/// removal (`release`) clears both in one place.
extension WaitingLists {
    /// The reminder kinds `owner` turned off.
    package func remindersOff(of owner: String) async throws -> Set<ReminderKind> {
        try await database.read { sql in
            Set(
                try await sql.raw("SELECT kind FROM reminders_off WHERE owner = \(bind: owner.lowercased())").all()
                    .compactMap { ReminderKind(rawValue: try $0.decode(column: "kind", as: String.self)) })
        }
    }

    /// Turns off exactly the kinds in `off` for `owner`, in one transaction.
    package func setRemindersOff(_ off: Set<ReminderKind>, for owner: String) async throws {
        let key = owner.lowercased()
        try await database.transaction { sql in
            try await sql.raw("DELETE FROM reminders_off WHERE owner = \(bind: key)").run()
            for kind in off.sorted(by: { $0.rawValue < $1.rawValue }) {
                try await sql.raw(
                    "INSERT INTO reminders_off (owner, kind) VALUES (\(bind: key), \(bind: kind.rawValue))"
                )
                .run()
            }
        }
        await events.notice(Self.remindersChange.name, "changed")
    }

    /// The notice that someone turned reminders on or off, on any instance: a kept notifications page shows them.
    package static let remindersChange = HubChange.notice("reminders")
}
