import Foundation

/// The rules for accounts, shared by the server's API and forms, the kit and the CLI.
public enum AccountValidation {
    public static let minPasswordLength = 10
    /// bcrypt reads at most 72 bytes: a longer password would be silently cut.
    public static let maxPasswordBytes = 72

    /// 3 to 32 letters, digits, dots, dashes or underscores.
    public static func username(_ raw: String?) throws(ValidationFailure) -> String {
        let username = (raw ?? "").trimmingCharacters(in: .whitespaces)
        let allowed = username.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "._-".unicodeScalars.contains($0)
        }
        guard (3...32).contains(username.count), allowed else {
            throw ValidationFailure(
                field: "username", message: "A username is 3 to 32 letters, digits, dots, dashes or underscores.")
        }
        return username
    }

    /// 1 to 100 characters, no control characters (a display name, or a label such as an app link's).
    public static func displayName(_ raw: String?, field: String = "displayName") throws(ValidationFailure) -> String {
        try HumanText.checked(raw, field: field, what: "A display name", max: 100)
    }

    /// A display name people choose for themselves (open sign-up): as any display name, and not one that claims
    /// a role, which others would trust ("Administrator", "Quad support").
    public static func chosenDisplayName(_ raw: String?) throws(ValidationFailure) -> String {
        let name = try displayName(raw)
        let letters = name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .unicodeScalars.filter { CharacterSet.letters.contains($0) }
        let folded = String(String.UnicodeScalarView(letters))
        if roleWords.contains(where: { folded.contains($0) }) {
            throw ValidationFailure(
                field: "displayName", message: "A display name may not claim a role: choose your own name.")
        }
        return name
    }

    /// Words that name a role or the service itself, in English and French, as `chosenDisplayName` folds them.
    static let roleWords = [
        "admin", "moderat", "quad", "staff", "support", "system", "root", "feed", "officiel", "official",
    ]

    /// Says why a password is refused, so a form can show it.
    public static func password(_ raw: String?) throws(ValidationFailure) -> String {
        let password = raw ?? ""
        guard password.count >= minPasswordLength else {
            throw ValidationFailure(
                field: "password", message: "A password needs at least \(minPasswordLength) characters.")
        }
        guard password.utf8.count <= maxPasswordBytes else {
            throw ValidationFailure(field: "password", message: "A password is at most \(maxPasswordBytes) bytes long.")
        }
        return password
    }

    /// Digits only, 1 to 20 of them; empty means none.
    public static func studentId(_ raw: String?) throws(ValidationFailure) -> String? {
        let id = (raw ?? "").trimmingCharacters(in: .whitespaces)
        if id.isEmpty { return nil }
        guard id.count <= 20, id.allSatisfy(\.isASCII), id.allSatisfy(\.isNumber) else {
            throw ValidationFailure(field: "studentId", message: "A student id is 1 to 20 digits.")
        }
        return id
    }

    /// An address Quad can send mail to, as it is stored: trimmed, its domain in lowercase; empty means none. Plain
    /// ASCII (a domain of other letters in its `xn--` form): one `@`, a local part of at most 64 bytes without
    /// spaces, quotes or brackets and without dots at its ends or side by side, a domain of at least two labels of
    /// letters, digits and hyphens; 254 bytes at most (RFC 5321's limits). What a relay refuses, it refuses.
    public static func mailAddress(_ raw: String?, field: String = "email") throws(ValidationFailure) -> String? {
        let text = (raw ?? "").trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return nil }
        let failure = ValidationFailure(field: field, message: "Give an email address such as ada@example.org.")
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard text.utf8.count <= 254, parts.count == 2, let local = parts.first, let domain = parts.last else {
            throw failure
        }
        let localAllowed = local.unicodeScalars.allSatisfy {
            $0.isASCII && $0.value > 0x20 && $0.value < 0x7F && !"\"(),:;<>[\\]".unicodeScalars.contains($0)
        }
        guard (1...64).contains(local.utf8.count), localAllowed, local.first != ".", local.last != ".",
            !local.contains("..")
        else { throw failure }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        let labelsAllowed = labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.unicodeScalars.allSatisfy {
                    ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                }
        }
        guard labels.count >= 2, labelsAllowed else { throw failure }
        return local + "@" + domain.lowercased()
    }

    public static func role(_ raw: String?) throws(ValidationFailure) -> Role {
        guard let raw, let role = Role(rawValue: raw) else {
            throw ValidationFailure(field: "role", message: "A role is member, admin or feed.")
        }
        return role
    }
}
