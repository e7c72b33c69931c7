import Foundation
import QuadCore

/// Quad's release, shown to admins (`/admin`); raised with each release.
package enum QuadVersion {
    package static let current = "0.39.0"
}

/// The state of this Quad, as `/admin` shows it: the version, the database, the mail and sign-in settings in effect,
/// the mail waiting to go, and the last backup. Nothing secret: the database's and relay's descriptions leave out
/// passwords, and the provider is named by its issuer.
package struct InstanceStatus: Sendable {
    let platform: Platform

    package struct Fact: Sendable {
        let label: String
        let value: String
        let id: String
    }

    func facts(_ t: Localizer) async -> [Fact] {
        let configuration = platform.configuration
        let database =
            switch configuration.database {
            case .postgres: t("admin.status.postgres", ["where": configuration.database.description])
            case .sqlite, .sqliteMemory: t("admin.status.sqlite", ["where": configuration.database.description])
            }
        let mail = configuration.smtpRelay.map { t("admin.status.mailThrough", ["relay": $0.description]) }
        let signIn = [
            configuration.localPasswords ? t("admin.status.passwords") : nil,
            configuration.organisation.map { t("admin.status.organisation", ["issuer": $0.issuer]) },
        ].compactMap { $0 }.joined(separator: " · ")
        let waiting = (try? await platform.outbox.depth()).map { t("admin.status.waiting", count: $0) }
        let backup: String =
            if let last = platform.backups?.last {
                t(
                    "admin.status.backupMade",
                    [
                        "file": (last.file as NSString).lastPathComponent,
                        "when": last.at.formatted(
                            .iso8601.year().month().day().time(includingFractionalSeconds: false)),
                        "size": ByteCountFormatter.string(fromByteCount: Int64(last.bytes), countStyle: .file),
                    ])
            } else if configuration.backups != nil {
                t("admin.status.backupNone")
            } else {
                t("admin.status.backupOff")
            }
        return [
            Fact(label: t("admin.status.version"), value: QuadVersion.current, id: "status-version"),
            Fact(label: t("admin.status.database"), value: database, id: "status-database"),
            Fact(label: t("admin.status.mail"), value: mail ?? t("admin.status.mailOff"), id: "status-mail"),
            Fact(label: t("admin.status.waitingLabel"), value: waiting ?? "?", id: "status-outbox"),
            Fact(label: t("admin.status.signIn"), value: signIn, id: "status-sign-in"),
            Fact(label: t("admin.status.backup"), value: backup, id: "status-backup"),
        ]
    }
}
