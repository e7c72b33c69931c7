import Foundation

/// The rules for what people and admins type about rooms; the server, the kit and the CLI all use them.
public enum RoomValidation {
    public static let maxPersonLength = 100
    public static let maxNameLength = 80
    public static let maxCapacity = 10_000

    /// The booking person's name, trimmed: 1 to 100 characters, no control characters.
    public static func person(_ raw: String?) throws(ValidationFailure) -> String {
        guard !HumanText.tidy(raw).isEmpty else {
            throw ValidationFailure(field: "person", message: "Say who the spot is for.")
        }
        return try HumanText.checked(raw, field: "person", what: "A name", max: maxPersonLength)
    }

    /// A room's fields as an admin sets them; every field at fault is named, not just the first.
    public static func room(
        id: String?, name: String?, building: String?, capacity: Int?, spots: Int?
    ) throws(ValidationFailure) -> (id: String, name: String, building: String, capacity: Int, spots: Int) {
        var errors: [FieldError] = []
        let name = HumanText.check(name, field: "name", what: "A room's name", max: maxNameLength, &errors)
        let building = HumanText.check(
            building, field: "building", what: "A building's name", max: maxNameLength, &errors)
        let derived = id == nil
        let id = id ?? slug(name)
        // An id derived from a name at fault would only repeat the name's error.
        if !isSlug(id), !(derived && errors.contains { $0.field == "name" }) {
            errors.append(
                .init(
                    field: "id", message: "An id is lowercase letters, digits and single dashes, at most 64 characters."
                ))
        }
        let capacity = capacity ?? 0
        if !(1...maxCapacity).contains(capacity) {
            errors.append(.init(field: "capacity", message: "Capacity is a whole number from 1 to \(maxCapacity)."))
        }
        let spots = spots ?? capacity
        if spots < 0 || spots > capacity {
            errors.append(.init(field: "spots", message: "Spots are from 0 to the capacity (\(capacity))."))
        }
        guard errors.isEmpty else { throw ValidationFailure(errors) }
        return (id, name, building, capacity, spots)
    }

    /// `Salle Ljerka-Ève 2` → `salle-ljerka-eve-2`.
    public static func slug(_ text: String) -> String {
        let folded = text.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: Locale(identifier: "en"))
        var slug = ""
        for scalar in folded.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                slug.unicodeScalars.append(scalar)
            } else if !slug.isEmpty, !slug.hasSuffix("-") {
                slug.append("-")
            }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        return String(slug.prefix(64))
    }

    public static func isSlug(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 64 && !id.hasPrefix("-") && !id.hasSuffix("-") && !id.contains("--")
            && id.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }
}
