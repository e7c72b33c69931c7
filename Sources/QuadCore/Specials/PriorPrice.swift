import Foundation

/// A product's prices over time, and the price a reduction is announced against: the lowest price applied during the
/// 30 days before the reduction applied (Directive 98/6/EC, Art. 6a, as Directive 2019/2161 wrote it in), its regular
/// prices and the reduced prices of earlier specials alike. A special not below that is no reduction: no struck price,
/// no saving.
public struct PriceHistory: Sendable, Equatable {
    /// A reduced price that applied from `from` until `until` (an earlier special, or the price before this one).
    public struct Reduction: Sendable, Equatable {
        public var from: Date
        public var until: Date
        public var price: Money

        public init(from: Date, until: Date, price: Money) {
            self.from = from
            self.until = until
            self.price = price
        }
    }

    /// Each regular price from the instant it applied, oldest first.
    public var changes: [(from: Date, price: Money)]
    /// The reduced prices that applied, oldest first.
    public var reductions: [Reduction]

    /// The days before a reduction whose lowest price it is compared with.
    public static let window: TimeInterval = 30 * 86400

    /// A price replaced within this time of being set was a correction (a typo mended), not a price applied.
    public static let correction: TimeInterval = 15 * 60

    public init(_ changes: [(from: Date, price: Money)], reductions: [Reduction] = []) {
        self.changes = changes.sorted { $0.from < $1.from }
        self.reductions = reductions.sorted { $0.from < $1.from }
    }

    public static func == (a: PriceHistory, b: PriceHistory) -> Bool {
        a.changes.map(\.from) == b.changes.map(\.from) && a.changes.map(\.price) == b.changes.map(\.price)
            && a.reductions == b.reductions
    }

    /// The regular price in force at `instant`; nil before the first.
    public func price(at instant: Date) -> Money? {
        changes.last { $0.from <= instant }?.price
    }

    /// The lowest price applied at any moment of the 30 days before `start`: the regular price in force when they
    /// began, those set during them, and any reduced price that applied during them (none that was a correction).
    /// Nil without any price before `start`.
    public func prior(before start: Date) -> Money? {
        let opening = start.addingTimeInterval(-Self.window)
        let during = changes.indices.filter { index in
            let from = changes[index].from
            let next = index + 1 < changes.count ? changes[index + 1].from : nil
            return from > opening && from < start && next.map { $0.timeIntervalSince(from) >= Self.correction } ?? true
        }.map { changes[$0].price }
        let reduced = reductions.filter {
            $0.from < start && $0.until > opening && $0.until.timeIntervalSince($0.from) >= Self.correction
        }.map(\.price)
        return ([price(at: opening)].compactMap { $0 } + during + reduced).min()
    }

    /// Records a reduced price that applied, replacing one recorded from the same instant (the same special's
    /// reduction, recorded again as it went on).
    public mutating func record(_ reduction: Reduction) {
        reductions = (reductions.filter { $0.from != reduction.from } + [reduction]).sorted { $0.from < $1.from }
    }
}
