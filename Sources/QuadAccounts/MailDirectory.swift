import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Where a person's mail goes, for the courier that writes the features' messages (`MailRecipients`): the address they
/// confirmed (`mail_addresses`), their display name and the language they chose, unless they turned that kind of mail
/// off (`mail_choices_off`); and the links in each message that turn it off. A part of Accounts built on its own, with
/// the platform: the courier is, before any feature.
package struct MailDirectory: MailRecipients {
    let clock: any QuadClock

    package init(clock: any QuadClock) {
        self.clock = clock
    }

    package func recipient(
        _ owner: String, choice: MailChoice?, _ sql: any SQLDatabase
    ) async throws
        -> MailRecipient?
    {
        let chosen: SQLQueryString =
            choice.map {
                """
                AND NOT EXISTS (
                    SELECT 1 FROM mail_choices_off c WHERE c.username_key = m.username_key AND c.choice = \(bind: $0.rawValue))
                """
            } ?? ""
        guard
            let row = try await sql.raw(
                """
                SELECT p.username, p.display_name, m.address, m.language
                FROM mail_addresses m JOIN people p ON p.username_key = m.username_key
                WHERE m.username_key = \(bind: owner.lowercased()) AND m.address IS NOT NULL \(chosen)
                """
            ).first()
        else { return nil }
        return MailRecipient(
            username: try row.decode(column: "username", as: String.self),
            name: try row.decode(column: "display_name", as: String.self),
            address: try row.decode(column: "address", as: String.self),
            language: Language(code: try row.decode(column: "language", as: String.self)) ?? .fallback)
    }

    package func unsubscribeTokens(
        _ wanted: [(owner: String, choice: MailChoice)], _ sql: any SQLDatabase
    ) async throws -> [String] {
        try await MailAddressStore.unsubscribeTokens(wanted, now: clock.now, sql)
    }
}
