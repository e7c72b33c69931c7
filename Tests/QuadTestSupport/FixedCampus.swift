import Foundation
import QuadPlatform
import SQLKit

/// A campus time zone for a store made without the Timetable (`CampusTime`).
package struct FixedCampus: CampusTime {
    package let zone: TimeZone

    package func timeZone() async -> TimeZone { zone }

    package func timeZone(_ sql: any SQLDatabase) async -> TimeZone { zone }

    package var changes: [HubChange] { [] }

    package static let melbourne = FixedCampus(zone: TestTime.melbourne)
}
