import Foundation
import QuadCore
import QuadPlatform

/// The Specials' part of a day, for everyone: a strip of the mosaic's first tiles valid now, leading to the mosaic.
extension Specials: TodayPart {
    /// As many tiles as the strip shows.
    static let stripLength = 4

    package var todayChanges: [HubChange] { [.event(.special)] }

    package func today(for person: Person?, at now: Date, t: Localizer) async throws -> [TodaySection] {
        let (records, settings, _) = try await kept.current(at: now)
        // What the person watches and is on special now comes first, said as such.
        var watched: Set<String> = []
        if let person { watched = try await store.watched(by: person.username) }
        let asked = Set(records.filter { watched.contains($0.productId) && $0.isReduced }.map(\.id))
        let strip = records.filter { asked.contains($0.id) } + records.filter { !asked.contains($0.id) }
        return [
            TodaySection(
                key: .specials, title: t("specials.today.title"), empty: t("specials.today.empty"),
                more: TodayLink(label: t("specials.today.more"), path: "/specials"),
                items: strip.prefix(max(Self.stripLength, asked.count)).map { record in
                    let tile = SpecialsRoutes.tile(record, settings: settings, t: t)
                    return TodayItem(
                        id: record.id,
                        title: asked.contains(record.id)
                            ? t("specials.today.watched", ["name": record.displayName]) : record.displayName,
                        detail: [
                            tile.price, tile.originalLabel, tile.savings, tile.unitPrice, tile.until, tile.promotion,
                        ]
                        .compactMap { $0 }
                        .joined(separator: " · "),
                        path: "/specials/\(record.id)",
                        image: tile.image.isEmpty ? nil : tile.image)
                })
        ]
    }
}
