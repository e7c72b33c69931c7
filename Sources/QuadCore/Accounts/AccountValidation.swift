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

    public static func role(_ raw: String?) throws(ValidationFailure) -> Role {
        guard let raw, let role = Role(rawValue: raw) else {
            throw ValidationFailure(field: "role", message: "A role is member, admin or feed.")
        }
        return role
    }
}
