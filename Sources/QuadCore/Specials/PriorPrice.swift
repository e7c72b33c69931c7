import Foundation

/// A product's regular price over time, and the price a reduction is announced against: the lowest it was during the
/// 30 days before the reduction applied (Directive 98/6/EC, Art. 6a, as Directive 2019/2161 wrote it in). A special
/// not below that is no reduction: no struck price, no saving.
public struct RegularPrices: Sendable, Equatable {
    /// Each price from the instant it applied, oldest first.
    public var changes: [(from: Date, price: Money)]

    /// The days before a reduction whose lowest price it is compared with.
    public static let window: TimeInterval = 30 * 86400

    public init(_ changes: [(from: Date, price: Money)]) {
        self.changes = changes.sorted { $0.from < $1.from }
    }

    public static func == (a: RegularPrices, b: RegularPrices) -> Bool {
        a.changes.map(\.from) == b.changes.map(\.from) && a.changes.map(\.price) == b.changes.map(\.price)
    }

    /// The price in force at `instant`; nil before the first.
    public func price(at instant: Date) -> Money? {
        changes.last { $0.from <= instant }?.price
    }

    /// The lowest price in force at any moment of the 30 days before `start` (the one in force when they began
    /// included); nil without any price before `start`.
    public func prior(before start: Date) -> Money? {
        let opening = start.addingTimeInterval(-Self.window)
        let during = changes.filter { $0.from > opening && $0.from < start }.map(\.price)
        return ([price(at: opening)].compactMap { $0 } + during).min()
    }
}
