import Foundation
import QuadCore
import QuadPlatform

/// The specials and their settings as the store holds them.
struct SpecialsData: Sendable {
    var records: [SpecialRecord]
    var settings: SpecialsSettings

    /// The specials valid at `date`, in the manager's order, and when that list next changes by itself.
    func current(at date: Date) -> (records: [SpecialRecord], next: Date?) {
        let specials = records.map { ($0, $0.special(baseURL: "")) }
        let next = specials.compactMap { $0.1.nextBoundary(after: date) }.min()
        return (specials.filter { $0.1.isValid(at: date) }.map(\.0), next)
    }
}

/// The specials as every page and poll reads them: loaded once per change, and `GET /api/specials` encoded once from
/// that per base URL and per validity window.
struct KeptSpecials: Sendable {
    let loaded: Kept<One, SpecialsData>
    let list: KeptAnswer

    init(store: SpecialStore, platform: Platform) {
        let loaded = Kept<One, SpecialsData>(
            hub: platform.events, clock: platform.clock, droppedBy: [.event(.special)]
        ) { SpecialsData(records: try await store.all(), settings: try await store.settings()) }
        self.loaded = loaded
        self.list = KeptAnswer(
            operation: Operations.ListSpecials.id, path: "/api/specials", platform: platform,
            droppedBy: [.event(.special)]
        ) { [clock = platform.clock] baseURL in
            let data = try await loaded.value()
            let (records, next) = data.current(at: clock.now)
            let list = SpecialsList(
                canvasUnit: data.settings.canvasUnit, currency: data.settings.currency,
                managerSpecials: records.map { $0.special(baseURL: baseURL) })
            return try EncodedAnswer.json(list, expires: next)
        }
    }

    /// Every special, in the manager's order, whatever its validity.
    func records() async throws -> [SpecialRecord] { try await loaded.value().records }

    func settings() async throws -> SpecialsSettings { try await loaded.value().settings }

    /// The specials valid at `date`, their settings, and when that list next changes by itself.
    func current(at date: Date) async throws -> (records: [SpecialRecord], settings: SpecialsSettings, next: Date?) {
        let data = try await loaded.value()
        let (records, next) = data.current(at: date)
        return (records, data.settings, next)
    }
}
