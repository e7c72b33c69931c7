import NIOConcurrencyHelpers
import SQLKit

/// Rows a transaction adds that may wait for its end (the outbox's messages), written just before its COMMIT with
/// one statement for each kind (`gather`), inside the transaction still: a rollback drops them with the rest.
///
/// Why: on SQLite every statement of a transaction holds the one writer for a round trip to SQLite's thread. One
/// outbox row per booking, written as the booking is, took the booking storm from 1.05x to 0.79x of the storm
/// without mail (measured with `Benchmarks/run booking-storm-mail`); a batch of bookings now writes its messages in
/// one statement.
package final class BeforeCommit: Sendable {
    /// The transaction the current task is in, if any (`Database.transaction` sets it).
    @TaskLocal package static var current: BeforeCommit?

    private struct Pile: @unchecked Sendable {
        var items: [Any]
        let write: @Sendable ([Any], any SQLDatabase) async throws -> Void
    }

    private let piles = NIOLockedValueBox<[(key: String, pile: Pile)]>([])

    init() {}

    /// `item` is written with the others of `key`, by `write`, before the transaction commits.
    package func gather<Item: Sendable>(
        _ item: Item, into key: String, write: @escaping @Sendable ([Item], any SQLDatabase) async throws -> Void
    ) {
        piles.withLockedValue { piles in
            if let index = piles.firstIndex(where: { $0.key == key }) {
                piles[index].pile.items.append(item)
            } else {
                piles.append(
                    (key, Pile(items: [item]) { items, sql in try await write(items.map { $0 as! Item }, sql) }))
            }
        }
    }

    /// Writes what was gathered, in the order the kinds first came.
    func run(_ sql: any SQLDatabase) async throws {
        let piles = self.piles.withLockedValue { piles in
            defer { piles = [] }; return piles
        }
        for (_, pile) in piles { try await pile.write(pile.items, sql) }
    }
}
