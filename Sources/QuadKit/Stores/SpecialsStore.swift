import Foundation
import Observation
import QuadCore

/// The single source of truth for the specials screen: the mosaic's specials and settings (kept on disk for
/// offline use), laid out in rows for a given width with QuadCore's `SpecialsLayout`, refreshed by
/// `special` events as the manager changes them.
@MainActor
@Observable
public final class SpecialsStore {
    public private(set) var list: SpecialsList?
    public private(set) var isOffline = false
    public private(set) var lastUpdated: Date?
    public private(set) var lastError: String?

    public let session: KitSession
    /// Polling and live updates: the lifecycle every store shares.
    @ObservationIgnored public private(set) var link: LiveLink?
    private var refresher: Refresher? { link?.refresher }

    static let specialsKey = "specials"

    public init(session: KitSession) {
        self.session = session
        link = LiveLink(session: session) { [weak self] in try await self?.fetch() }
        loadCached()
    }

    /// The specials in the manager's order.
    public var specials: [Special] { list?.managerSpecials ?? [] }

    /// How many units span the screen's width.
    public var canvasUnit: Int { list?.canvasUnit ?? SpecialsSettings().canvasUnit }

    /// The size of one unit on a screen `width` points (or columns) wide.
    public func unitSize(width: Double) -> Double { width / Double(max(canvasUnit, 1)) }

    /// The rows of the mosaic: which specials go on each, how wide it is and its inset, in units (multiply
    /// by `unitSize(width:)` to place them). The rule does not depend on the width: the canvas is always
    /// `canvasUnit` units across, only the unit's size changes.
    public var rows: [SpecialsLayout.Row] { SpecialsLayout.rows(specials, canvas: max(canvasUnit, 1)) }

    /// A row with the specials it holds and where each starts, in points for a screen `width` wide.
    public struct PlacedRow: Sendable, Equatable {
        public var specials: [Special]
        /// The x of each special's left edge.
        public var offsets: [Double]
        public var height: Double
    }

    public func rows(width: Double) -> [PlacedRow] {
        let unit = unitSize(width: width)
        let all = specials
        return rows.map { row in
            var x = row.inset * unit
            var offsets: [Double] = []
            for index in row.tiles {
                offsets.append(x)
                x += Double(min(max(all[index].width, 1), canvasUnit)) * unit
            }
            let placed = row.tiles.map { all[$0] }
            return PlacedRow(
                specials: placed, offsets: offsets, height: Double(placed.map(\.height).max() ?? 0) * unit)
        }
    }

    public var age: TimeInterval? { lastUpdated.map { session.clock.now.timeIntervalSince($0) } }

    // MARK: Lifecycle

    public func loadCached() {
        guard let entry = session.offline?.load(SpecialsList.self, for: Self.specialsKey) else { return }
        list = entry.value
        lastUpdated = entry.savedAt
    }

    /// A `special` (added, changed, moved, deleted, or a validity boundary passed) or `reset` refreshes.
    public func apply(_ event: ServerEvent) async {
        if event.kind == .special || event.kind == .reset { await refresher?.refreshAfterChange() }
    }

    private func fetch() async throws {
        do {
            let fetched = try await session.client.specials()
            let now = session.clock.now
            list = fetched.value
            lastUpdated = now
            isOffline = false
            lastError = nil
            try? session.offline?.save(fetched.value, for: Self.specialsKey, at: now, etag: fetched.etag)
        } catch {
            let kit = KitError.from(error)
            if kit.isOffline { isOffline = true }
            lastError = kit.description
            throw kit
        }
    }
}

extension SpecialsStore: LiveStore {}
