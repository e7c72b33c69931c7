import Foundation

/// Every user-facing string, looked up by key in the language's resource file
/// (`Resources/Localization/<code>.json` and one `<code>.<feature>.json` per feature), with English as the fallback.
///
/// A value is either a string or, for counted phrases, an object keyed by CLDR plural category,
/// where `"0"` may give an exact phrase for zero ("No spots remaining").
/// Placeholders are written `{name}`; `{count}` is the count itself.
public struct Localizer: Sendable {
    public let language: Language
    private let table: [String: Entry]
    private let fallbackTable: [String: Entry]

    public init(language: Language) {
        self.language = language
        self.table = Catalog.shared.tables[language] ?? [:]
        self.fallbackTable = Catalog.shared.tables[.fallback] ?? [:]
    }

    /// The string for `key`, with `{placeholders}` filled in. A missing key shows as itself, so it is noticed.
    public func callAsFunction(_ key: String, _ arguments: [String: String] = [:]) -> String {
        switch table[key] ?? fallbackTable[key] {
        case .text(let text): fill(text, arguments)
        case .plural(let forms): fill(forms["other"] ?? key, arguments)
        case nil: key
        }
    }

    /// The counted phrase for `key`, chosen by the language's plural rules.
    public func callAsFunction(_ key: String, count: Int, _ arguments: [String: String] = [:]) -> String {
        var arguments = arguments
        arguments["count"] = String(count)
        switch table[key] ?? fallbackTable[key] {
        case .plural(let forms):
            let category = PluralCategory(count: count, language: language).rawValue
            let text = forms[String(count)] ?? forms[category] ?? forms["other"] ?? key
            return fill(text, arguments)
        case .text(let text): return fill(text, arguments)
        case nil: return key
        }
    }

    /// The phrase for a position (`{count}` is the position), chosen by the language's ordinal rules: "2nd in line".
    public func callAsFunction(_ key: String, ordinal: Int, _ arguments: [String: String] = [:]) -> String {
        var arguments = arguments
        arguments["count"] = String(ordinal)
        switch table[key] ?? fallbackTable[key] {
        case .plural(let forms):
            let category = PluralCategory(ordinal: ordinal, language: language).rawValue
            return fill(forms[category] ?? forms["other"] ?? key, arguments)
        case .text(let text): return fill(text, arguments)
        case nil: return key
        }
    }

    /// A counted phrase's forms as written (`{"0": …, "one": …, "other": …}`), for clients that pluralise themselves.
    public func forms(_ key: String) -> [String: String] {
        switch table[key] ?? fallbackTable[key] {
        case .plural(let forms): forms
        case .text(let text): ["other": text]
        case nil: ["other": key]
        }
    }

    /// All keys of the language's table, for checks that both languages say everything.
    public var keys: Set<String> { Set(table.keys) }

    private func fill(_ text: String, _ arguments: [String: String]) -> String {
        guard !arguments.isEmpty, text.contains("{") else { return text }
        var result = text
        for (name, value) in arguments {
            result = result.replacingOccurrences(of: "{\(name)}", with: value)
        }
        return result
    }
}

enum Entry: Sendable, Decodable {
    case text(String)
    case plural([String: String])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .text(text)
        } else {
            self = .plural(try container.decode([String: String].self))
        }
    }
}

/// The string tables, read once from the bundled resource files.
final class Catalog: Sendable {
    static let shared = Catalog()
    let tables: [Language: [String: Entry]]

    private init() {
        var tables: [Language: [String: Entry]] = [:]
        let directory = Bundle.module.url(forResource: "Localization", withExtension: nil)
        let files =
            directory.flatMap { try? FileManager.default.contentsOfDirectory(at: $0, includingPropertiesForKeys: nil) }
            ?? []
        for url in files.filter({ $0.pathExtension == "json" }).sorted(by: {
            $0.lastPathComponent < $1.lastPathComponent
        }) {
            // `en.json` holds the shared strings; `en.<feature>.json` a feature's own.
            let name = url.deletingPathExtension().lastPathComponent
            guard let language = Language(rawValue: String(name.prefix { $0 != "." })) else { continue }
            do {
                let table = try JSONDecoder().decode([String: Entry].self, from: Data(contentsOf: url))
                tables[language, default: [:]].merge(table) { _, _ in
                    preconditionFailure("Localization/\(url.lastPathComponent) repeats a key of another file")
                }
            } catch {
                preconditionFailure("Localization/\(url.lastPathComponent) is not valid: \(error)")
            }
        }
        self.tables = tables
    }
}
