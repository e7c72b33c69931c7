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

typealias SpecialsSnapshot = Snapshot<SpecialsData>

extension Snapshot<SpecialsData> {
    /// `GET /api/specials` encoded once per change and per validity window.
    convenience init(store: SpecialStore) {
        self.init(clock: store.clock) {
            SpecialsData(records: try await store.all(), settings: try await store.settings())
        } encode: { data, baseURL, now in
            let (records, next) = data.current(at: now)
            let list = SpecialsList(
                canvasUnit: data.settings.canvasUnit, currency: data.settings.currency,
                managerSpecials: records.map { $0.special(baseURL: baseURL) })
            return try Self.json(list, expires: next)
        }
    }

    /// Every special, in the manager's order, whatever its validity.
    func records() async throws -> [SpecialRecord] { try await loaded().records }

    func settings() async throws -> SpecialsSettings { try await loaded().settings }

    /// The specials valid at `date`, their settings, and when that list next changes by itself.
    func current(at date: Date) async throws -> (records: [SpecialRecord], settings: SpecialsSettings, next: Date?) {
        let data = try await loaded()
        let (records, next) = data.current(at: date)
        return (records, data.settings, next)
    }
}
