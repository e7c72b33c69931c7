import Foundation

/// The one validator for every text a person types and Quad keeps (names, titles, buildings, courses, labels,
/// promotions): the server, the kit and the CLI all check with it, and the contract's text patterns say the
/// same. A kept text is trimmed and in Unicode NFC (so `é` typed as `e` + accent is the same name), within its
/// length, and free of characters that break the place it is shown in: control characters, line and paragraph
/// separators, and invisible format characters (bidirectional overrides, zero-width marks). What is kept is
/// what reads back, byte for byte.
public enum HumanText {
    public enum Fault: Equatable, Sendable {
        case missing
        case tooLong(max: Int)
        case invisible
    }

    /// `raw` as Quad keeps it: trimmed, in Unicode NFC.
    public static func tidy(_ raw: String?) -> String {
        (raw ?? "").trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
    }

    /// Why `text` (tidied) cannot be kept, or nil. Lengths count characters as people see them.
    public static func fault(_ text: String, max: Int, required: Bool = true) -> Fault? {
        if text.unicodeScalars.contains(where: isRefused) { return .invisible }
        if required, text.isEmpty { return .missing }
        if text.count > max { return .tooLong(max: max) }
        return nil
    }

    /// The tidied text; a fault is added to `errors` under `field`, its message naming `what` ("A room's name").
    public static func check(
        _ raw: String?, field: String, what: String, max: Int, required: Bool = true, _ errors: inout [FieldError]
    ) -> String {
        let text = tidy(raw)
        if let fault = fault(text, max: max, required: required) {
            errors.append(FieldError(field: field, message: message(fault, what: what, max: max, required: required)))
        }
        return text
    }

    /// The same, for one field alone.
    public static func checked(
        _ raw: String?, field: String, what: String, max: Int, required: Bool = true
    ) throws(ValidationFailure) -> String {
        var errors: [FieldError] = []
        let text = check(raw, field: field, what: what, max: max, required: required, &errors)
        guard errors.isEmpty else { throw ValidationFailure(errors) }
        return text
    }

    public static func message(_ fault: Fault, what: String, max: Int, required: Bool = true) -> String {
        switch fault {
        case .missing, .tooLong:
            required ? "\(what) is 1 to \(max) characters." : "\(what) is at most \(max) characters."
        case .invisible:
            "\(what) cannot contain control characters, line breaks or invisible marks."
        }
    }

    /// Control (Cc) and format (Cf, as `isControlOrFormat`) characters, and the line and paragraph separators.
    public static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isControlOrFormat || scalar.properties.generalCategory == .lineSeparator
            || scalar.properties.generalCategory == .paragraphSeparator
    }
}
