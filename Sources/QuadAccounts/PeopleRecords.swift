import Foundation
import QuadCore
import QuadPlatform
import SQLKit

/// People as a CSV file (`RecordSet`), without passwords: someone imported signs in with the organisation, or sets a
/// password through the link an admin has sent them. Each value goes through the validators of `POST /api/people`
/// and `PATCH /api/people/{username}`; a row is matched by username, without case.
struct PeopleRecords: RecordSet {
    let accounts: Accounts

    let kind = "people"
    let columns = ["username", "display_name", "role", "student_id", "email", "mail_language"]
    let required = ["username", "display_name"]

    func rows() async throws -> [[String]] {
        let mail = try await accounts.addresses.inUse()
        return try await accounts.people.all().map { person in
            let entry = mail[person.username.lowercased()]
            return [
                person.username, person.displayName, person.role.rawValue, person.studentId ?? "",
                entry?.address ?? "", entry.map { $0.language.rawValue } ?? "",
            ]
        }
    }

    /// A row as checked: nil where the file has no such column (what Quad holds stays).
    struct Row {
        var row: RecordRow
        var username: String
        var displayName: String
        var role: Role?
        var studentId: String??
        var email: String??
        var language: Language?
    }

    func apply(_ rows: [RecordRow], errors: RowErrors) async throws -> ImportSummary {
        var errors = errors
        var checked: [Row] = []
        var seen: [String: Int] = [:]
        var studentIds: [String: Int] = [:]
        var addresses: [String: Int] = [:]
        for row in rows {
            let username = errors.check(row, "username") { try AccountValidation.username(row["username"]) }
            let name = errors.check(row, "display_name") {
                try AccountValidation.displayName(row["display_name"], field: "display_name")
            }
            let role = errors.check(row, "role") { () throws -> Role? in
                try row["role"].map { $0.isEmpty ? .member : try AccountValidation.role($0) }
            }
            let studentId = errors.check(row, "student_id") { () throws -> String?? in
                try row["student_id"].map { try AccountValidation.studentId($0) }
            }
            let email = errors.check(row, "email") { () throws -> String?? in
                try row["email"].map { try AccountValidation.mailAddress($0) }
            }
            let language = errors.check(row, "mail_language") { () throws -> Language? in
                try row["mail_language"].map { raw in
                    if raw.isEmpty { return Language.fallback }
                    guard let language = Language(rawValue: raw) else {
                        throw ValidationFailure(field: "mail_language", message: "Give en or fr, or leave it empty.")
                    }
                    return language
                }
            }
            guard let username, let name, let role, let studentId, let email, let language else { continue }
            if let first = seen.updateValue(row.number, forKey: username.lowercased()) {
                errors.add(row, field: "username", "\(username) is on row \(first) too.")
            }
            if case .some(.some(let id)) = studentId, let first = studentIds.updateValue(row.number, forKey: id) {
                errors.add(row, field: "student_id", "Student id \(id) is on row \(first) too.")
            }
            if case .some(.some(let address)) = email,
                let first = addresses.updateValue(row.number, forKey: address.lowercased())
            {
                errors.add(row, field: "email", "\(address) is on row \(first) too.")
            }
            checked.append(
                Row(
                    row: row, username: username, displayName: name, role: role, studentId: studentId, email: email,
                    language: language))
        }
        try errors.throwIfAny()
        return try await accounts.importPeople(checked)
    }
}

extension Accounts {
    /// Applies checked rows in one transaction: a new person without a password, or the changes to one Quad has
    /// (as `PATCH /api/people/{username}` makes them: a student id that moves ends the feeds it leaves and joins).
    func importPeople(_ rows: [PeopleRecords.Row]) async throws -> ImportSummary {
        let current = Dictionary(try await people.all().map { ($0.username.lowercased(), $0) }) { first, _ in first }
        let mail = try await addresses.inUse()
        let keys = self.keys
        let addresses = self.addresses
        let people = self.people
        let (summary, announcements, changed) = try await platform.database.transaction { sql in
            var summary = ImportSummary()
            var announcements: [@Sendable () async -> Void] = []
            var changed: [String] = []
            for item in rows {
                let key = item.username.lowercased()
                let entry = mail[key]
                // The language matters only with an address to write to.
                let newAddress = item.email.map { $0 != entry?.address } ?? false
                let newLanguage =
                    (item.email ?? entry?.address) != nil
                    && (item.language.map { $0 != (entry?.language ?? .fallback) } ?? false)
                let wantsMail = newAddress || newLanguage
                try await RowErrors.at(item.row, field: "email") {
                    if case .some(.some(let address)) = item.email, let owner = try await Self.owner(of: address, sql),
                        owner != key
                    {
                        throw ValidationFailure(field: "email", message: "Someone else has \(address).")
                    }
                }
                guard let person = current[key] else {
                    let studentId = item.studentId ?? nil
                    try await RowErrors.at(item.row, field: "student_id") {
                        try await PeopleStore.checkStudentId(sql, studentId, except: nil)
                    }
                    try await people.insert(
                        Person(
                            username: item.username, displayName: item.displayName, role: item.role ?? .member,
                            studentId: studentId), passwordHash: PeopleStore.noPassword, sql)
                    if let address = item.email ?? nil {
                        try await addresses.set(item.username, address: address, language: item.language, sql)
                    }
                    summary.added += 1
                    continue
                }
                let same =
                    person.displayName == item.displayName && (item.role ?? person.role) == person.role
                    && (item.studentId ?? person.studentId) == person.studentId
                if same && !wantsMail {
                    summary.unchanged += 1
                    continue
                }
                if !same {
                    let (_, moved) = try await RowErrors.at(item.row, field: "student_id") {
                        try await PeopleStore.change(
                            person.username, displayName: item.displayName, role: item.role,
                            studentId: item.studentId, sql)
                    }
                    if !moved.isEmpty {
                        announcements.append(try await keys.endKeys(of: nil, studentIds: moved, in: sql))
                    }
                }
                if wantsMail {
                    try await addresses.set(
                        person.username, address: item.email ?? entry?.address, language: item.language, sql)
                }
                changed.append(key)
                summary.changed += 1
            }
            try await PeopleStore.keepAnAdmin(sql)
            return (summary, announcements, changed)
        }
        // Their sessions now sign in the people as changed (a role, a name).
        for key in changed { await sessions.cache.forget(username: key) }
        for announce in announcements { await announce() }
        return summary
    }

    /// Who has `address` in use, compared without case (inside the import's transaction).
    private static func owner(of address: String, _ sql: any SQLDatabase) async throws -> String? {
        try await sql.raw(
            "SELECT username_key FROM mail_addresses WHERE lower(address) = \(bind: address.lowercased())"
        ).first()?.decode(column: "username_key", as: String.self)
    }
}
