import Foundation
import QuadCore

/// The one encoder for JSON inside a page (`<script type="application/json">`: the layout's `quad-strings`): `<`, `>` and `&` are written
/// as `\u003c`, `\u003e`, `\u0026`, so no text (a car park named `<!--<script>`, a `</script>`) can end the
/// element or open a comment in it; U+2028 and U+2029 are escaped too, for any script that evaluates it.
/// Those characters only ever stand inside JSON strings, where the escapes read back as the same text.
package enum ScriptJSON {
    /// A page's script strings in the page's language: `{"lang", "strings", "plurals"}` (plural forms by
    /// CLDR category, and exact counts).
    static func strings(_ t: Localizer, _ wanted: ScriptStrings) -> String {
        let strings = Dictionary(wanted.keys.map { ($0, t($0)) }, uniquingKeysWith: { first, _ in first })
        let forms = Dictionary(wanted.plurals.map { ($0, t.forms($0)) }, uniquingKeysWith: { first, _ in first })
        let payload: [String: Any] = ["lang": t.language.rawValue, "strings": strings, "plurals": forms]
        return escape((try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])) ?? Data("{}".utf8))
    }

    static func escape(_ json: Data) -> String {
        var out = String.UnicodeScalarView()
        for scalar in String(decoding: json, as: UTF8.self).unicodeScalars {
            switch scalar {
            case "<": out.append(contentsOf: "\\u003c".unicodeScalars)
            case ">": out.append(contentsOf: "\\u003e".unicodeScalars)
            case "&": out.append(contentsOf: "\\u0026".unicodeScalars)
            case "\u{2028}": out.append(contentsOf: "\\u2028".unicodeScalars)
            case "\u{2029}": out.append(contentsOf: "\\u2029".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}

extension Date {
    /// This instant as page scripts read times (`Date.now()`, `data-*` attributes): whole milliseconds since 1970.
    package var milliseconds: Int { Int((timeIntervalSince1970 * 1000).rounded()) }
}
