import Foundation

/// The one validator for every text a person types and Quad keeps (names, titles, buildings, courses, labels,
/// promotions): the server, the kit and the CLI all check with it, and the contract's text patterns say the
/// same. A kept text is trimmed and in Unicode NFC (so `é` typed as `e` + accent is the same name), within its
/// length, and free of characters that break the place it is shown in: control characters, line and paragraph
/// separators, and invisible format characters (bidirectional overrides, zero-width marks, tags). What is kept is
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

    /// Why `text` (tidied) cannot be kept, or nil. Lengths count Unicode scalars, as the contract's `maxLength`
    /// does: a letter under ten thousand combining marks is not one character.
    public static func fault(_ text: String, max: Int, required: Bool = true) -> Fault? {
        if hasRefused(text) { return .invisible }
        if required, text.isEmpty { return .missing }
        if text.unicodeScalars.count > max { return .tooLong(max: max) }
        return nil
    }

    /// The tidied text; a fault is added to `errors` under `field`, its message naming `what` ("A room's name").
    public static func check(
        _ raw: String?, field: String, what: String, max: Int, required: Bool = true, _ errors: inout [FieldError]
    ) -> String {
        guard !isFarOver(raw, max: max) else {
            errors.append(FieldError(field: field, message: message(.tooLong(max: max), what: what, max: max)))
            return ""
        }
        let text = tidy(raw)
        if let fault = fault(text, max: max, required: required) {
            errors.append(FieldError(field: field, message: message(fault, what: what, max: max, required: required)))
        }
        return text
    }

    /// Far over the limit (16 bytes a character): refused before any work on it, as no tidying could bring it
    /// back under, and tidying a megabyte costs more than a page.
    public static func isFarOver(_ raw: String?, max: Int) -> Bool {
        (raw?.utf8.count ?? 0) > max * 16
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

    /// Control (Cc) and format (Cf) characters, and the line and paragraph separators. The one exception: the
    /// tag characters that spell a subdivision flag after a black flag (🏴 England, Scotland, Wales).
    public static func hasRefused(_ text: String) -> Bool {
        var inFlag = false
        for scalar in text.unicodeScalars {
            let isTag = (0xE0020...0xE007F).contains(scalar.value)
            defer { inFlag = scalar.value == 0x1F3F4 || (inFlag && isTag) }
            if isTag, inFlag { continue }
            if isRefused(scalar) { return true }
        }
        return false
    }

    /// Whether one scalar, on its own, may not be kept (`hasRefused` for a whole text).
    public static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
