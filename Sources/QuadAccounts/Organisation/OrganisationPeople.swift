import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// Who an organisation account is in Quad (table `organisation_people`: the provider's issuer and subject, and the
/// person). The first sign-in makes the person; each later one updates what the provider owns: the name, the
/// address and language, the role when the operator maps a group to it, the student id when a claim holds it.
extension Accounts {
    /// Why a sign-in through the provider cannot make or find the person.
    enum OrganisationRefusal: Error, Equatable {
        /// Someone here already uses the address, and the operator does not link accounts.
        case addressInUse
    }

    /// The person the provider's claims sign in, made or updated.
    func person(from claims: IDClaims, settings: OrganisationSignIn) async throws -> Person {
        guard let subject = claims.subject else { throw OpenIDProvider.Failure.untrusted("the ID token names no one") }
        let owned = Owned(claims, settings: settings)
        if let username = try await linkedUsername(issuer: settings.issuer, subject: subject) {
            return try await update(username, with: owned)
        }
        // Someone already here by address: the same person only when the operator says accounts are linked.
        if let email = owned.email, let owner = try await addresses.owner(of: email) {
            guard settings.linkExisting else { throw OrganisationRefusal.addressInUse }
            try await link(owner, issuer: settings.issuer, subject: subject)
            return try await update(owner, with: owned)
        }
        let wanted = Self.username(from: claims)
        if settings.linkExisting, let known = try await people.find(wanted) {
            try await link(known.username, issuer: settings.issuer, subject: subject)
            return try await update(known.username, with: owned)
        }
        do {
            return try await create(owned, wanted: wanted, issuer: settings.issuer, subject: subject)
        } catch {
            // Two first sign-ins of one person at once: the other made them.
            if let username = try await linkedUsername(issuer: settings.issuer, subject: subject) {
                return try await update(username, with: owned)
            }
            throw error
        }
    }

    /// Whether the person signs in through the organisation (the people page says so).
    func organisationUsernames() async throws -> Set<String> {
        try await platform.database.read { sql in
            Set(
                try await sql.raw("SELECT username_key FROM organisation_people").all().map {
                    try $0.decode(column: "username_key", as: String.self)
                })
        }
    }

    /// What the provider says of someone, each part checked by Quad's own rules (a part that fails them is left
    /// out, never stored as sent).
    struct Owned: Sendable {
        var displayName: String?
        var email: String?
        var language: Language?
        /// Nil: the operator maps no group to a role.
        var role: Role?
        /// Nil: no claim holds student ids. `.some(nil)`: the claim is there for others, not for this person.
        var studentId: String??

        init(_ claims: IDClaims, settings: OrganisationSignIn) {
            let given = [claims.text("given_name"), claims.text("family_name")].compactMap { $0 }
            let name = claims.text("name") ?? (given.isEmpty ? nil : given.joined(separator: " "))
            displayName = name.flatMap { try? AccountValidation.displayName($0) }
            email = claims.email.flatMap { try? AccountValidation.mailAddress($0) }.flatMap { $0 }
            language = claims.text("locale").flatMap { Language(code: String($0.prefix(2)).lowercased()) }
            if let group = settings.adminGroup {
                role = claims.texts(settings.groupsClaim).contains(group) ? .admin : .member
            }
            if let claim = settings.studentIDClaim {
                let value = claims.text(claim) ?? claims.number(claim).map { String(Int($0)) }
                studentId = .some(value.flatMap { try? AccountValidation.studentId($0) }.flatMap { $0 })
            }
        }
    }

    /// A username from `preferred_username`, else the address's first part, else the subject: Quad's characters
    /// only (others become `-`), 3 to 32 of them.
    static func username(from claims: IDClaims) -> String {
        let source =
            claims.text("preferred_username") ?? claims.email.map { String($0.prefix { $0 != "@" }) }
            ?? claims.subject ?? "person"
        var name = String(
            source.unicodeScalars.map { scalar -> Character in
                let allowed =
                    scalar.isASCII
                    && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar))
                return allowed ? Character(scalar) : "-"
            }
        ).prefix(32)
        while name.count < 3 { name += "-" }
        return String(name)
    }

    private func linkedUsername(issuer: String, subject: String) async throws -> String? {
        try await platform.database.withConnection { sql in
            try await sql.raw(
                """
                SELECT p.username FROM organisation_people o JOIN people p ON p.username_key = o.username_key
                WHERE o.issuer = \(bind: issuer) AND o.subject = \(bind: subject)
                """
            ).first()?.decode(column: "username", as: String.self)
        }
    }

    private func link(_ username: String, issuer: String, subject: String) async throws {
        try await platform.database.withConnection { sql in
            try await sql.raw(
                """
                INSERT INTO organisation_people (issuer, subject, username_key)
                VALUES (\(bind: issuer), \(bind: subject), \(bind: username.lowercased()))
                """
            ).run()
        }
    }

    /// A new person, with no password, linked to the account, with the address and language the provider gave.
    private func create(_ owned: Owned, wanted: String, issuer: String, subject: String) async throws -> Person {
        let people = self.people
        let addresses = self.addresses
        return try await platform.database.transaction { sql in
            var username = wanted
            var suffix = 1
            while try await sql.raw(
                "SELECT username_key FROM people WHERE username_key = \(bind: username.lowercased())"
            )
            .first() != nil {
                suffix += 1
                username = String(wanted.prefix(32 - String(suffix).count - 1)) + "-\(suffix)"
            }
            // A student id already someone else's is not taken from them: the person starts without one.
            var studentId = owned.studentId ?? nil
            if let id = studentId,
                try await sql.raw("SELECT username_key FROM people WHERE student_id = \(bind: id)").first() != nil
            {
                studentId = nil
            }
            let person = Person(
                username: username, displayName: owned.displayName ?? username, role: owned.role ?? .member,
                studentId: studentId)
            try await people.insert(person, passwordHash: PeopleStore.noPassword, sql)
            try await sql.raw(
                """
                INSERT INTO organisation_people (issuer, subject, username_key)
                VALUES (\(bind: issuer), \(bind: subject), \(bind: username.lowercased()))
                """
            ).run()
            if owned.email != nil || owned.language != nil {
                try await addresses.set(username, address: owned.email, language: owned.language, sql)
            }
            return person
        }
    }

    /// What the provider owns, brought up to date; the rest (bookings, choices) stays as the person left it.
    private func update(_ username: String, with owned: Owned) async throws -> Person {
        let current = try await addresses.entry(of: username)
        let email = owned.email.flatMap { $0 == current?.address ? nil : $0 }
        let language = owned.language.flatMap { $0 == current?.language ? nil : $0 }
        let before = try await people.find(username)
        let person = try await change(
            username, displayName: owned.displayName, role: owned.role?.rawValue, studentId: owned.studentId,
            password: nil, keepKeys: true, email: email, mailLanguage: language)
        // A role the provider's groups gave or took: kept in the audit trail, as an admin's change would be.
        if let before, before.role != person.role {
            await platform.audit.record(
                AuditEntry(
                    at: platform.clock.now, actor: "organisation", action: "organisationSignIn",
                    target: person.username,
                    detail: "role \(before.role.rawValue) → \(person.role.rawValue)",
                    address: RequestInfo.current.clientAddress))
        }
        return person
    }
}
