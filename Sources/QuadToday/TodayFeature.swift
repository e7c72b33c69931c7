import Foundation
import QuadCore
import QuadPlatform

/// Today: the home a person lives in. Signed in, `/` is their day (what is held for them, their bookings, lines,
/// loans, classes, the specials) and `GET /api/me/today` the same sections; a visitor's `/` is a short public home
/// (what is free now, the services, signing in). Each section is a feature's (`TodayPart`, handed in at
/// construction), drawn by that feature's own rules: this module reads no table.
package final class TodayFeature: Feature {
    let platform: Platform
    /// Every feature with a part of the day; the sections come out in the order they matter (`TodaySection.Key`),
    /// whatever the order here.
    let parts: [any TodayPart]
    /// The campus's time zone (the Timetable's setting), for the day's date.
    let campus: any CampusTime

    package init(platform: Platform, campus: any CampusTime, parts: [any TodayPart]) {
        self.platform = platform
        self.campus = campus
        self.parts = parts
    }

    package static var migrations: [Migration] { [] }

    package static let files = WebFiles(module: "QuadToday", bundle: .module)

    package func register(on routes: Routes, web: WebShell) throws {
        TodayRoutes(today: self, web: web, refreshSeconds: platform.configuration.refreshSeconds).register(on: routes)
        try TodayOperations(today: self).registerHandlers(on: routes.router, configuration: .quad, middlewares: .quad())
    }

    /// The changes after which a day may read otherwise: each part's.
    var changes: [HubChange] {
        parts.flatMap(\.todayChanges).reduce(into: []) { all, change in if !all.contains(change) { all.append(change) }
        }
    }

    /// `person`'s day (a visitor's when nil) as of now, in `t`'s language: every part asked at once.
    func day(for person: Person?, t: Localizer) async throws -> Today {
        let now = platform.clock.now
        let sections = try await withThrowingTaskGroup(of: [TodaySection].self) { group in
            for part in parts {
                group.addTask { try await part.today(for: person, at: now, t: t) }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        return Today(generatedAt: now, sections: sections)
    }
}
