import Foundation

/// The languages Quad speaks. English is the fallback for everything.
public enum Language: String, CaseIterable, Sendable, Codable {
    case english = "en"
    case french = "fr"

    public static let fallback = Language.english

    /// The language's own name, as a language switch shows it.
    public var nativeName: String {
        switch self {
        case .english: "English"
        case .french: "Français"
        }
    }

    /// Picks a language from a code such as `fr`, `fr-CA` or `EN_gb`.
    public init?(code: some StringProtocol) {
        let primary = code.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() }
        guard let primary, let language = Language(rawValue: primary) else { return nil }
        self = language
    }

    /// The best language for an `Accept-Language` header (RFC 9110 §12.5.4), by quality, then order.
    public static func negotiate(acceptLanguage header: String?) -> Language {
        guard let header else { return fallback }
        var best: (language: Language, quality: Double)?
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, let language = Language(code: tag) else { continue }
            let quality =
                parts.dropFirst()
                .first { $0.hasPrefix("q=") }
                .flatMap { Double($0.dropFirst(2)) } ?? 1
            if quality > 0, quality > (best?.quality ?? 0) { best = (language, quality) }
        }
        return best?.language ?? fallback
    }
}
