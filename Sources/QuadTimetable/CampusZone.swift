import Foundation
import QuadPlatform
import SQLKit

/// The campus's time zone as an admin set it (`/admin/timetable`), else the server's own: what Rooms, the Library
/// and Waiting keep time in. Built before them and before the Timetable (which owns the setting), so each is handed
/// it at construction. Kept until the timetable changes: Rooms asks for it on every booking, the Library on every page.
package final class CampusZone: CampusTime {
    let store: TimetableStore
    private let zone: Kept<One, TimeZone>

    package init(platform: Platform) {
        let store = TimetableStore(database: platform.database)
        self.store = store
        self.zone = Kept(hub: platform.events, clock: platform.clock, droppedBy: Self.zoneChanges) {
            try await store.campus()?.timeZone ?? .current
        }
    }

    static let zoneChanges: [HubChange] = [.notice("timetable-zone")]
    package var changes: [HubChange] { Self.zoneChanges }

    package func timeZone() async -> TimeZone {
        do {
            return try await zone.value()
        } catch {
            return .current
        }
    }

    package func timeZone(_ sql: any SQLDatabase) async -> TimeZone {
        if let kept = zone.cached(.value) { return kept }
        return (try? await TimetableStore.campus(sql))?.timeZone ?? .current
    }

    /// The timetable changed (`Timetable.changed()`): read the zone again, on every instance.
    func changed() async { await zone.changed() }
}
