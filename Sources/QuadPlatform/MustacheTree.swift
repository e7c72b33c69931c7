import Mustache

/// A page model as swift-mustache reads it fastest: every struct turned into a dictionary once per render.
///
/// Why: swift-mustache reads a struct's field through a `Mirror` of the whole struct, for every tag, and for every
/// enclosing context a tag climbs through (`{{t.…}}` inside a card mirrors the card, the page, then the frame).
/// Profiled on the `/rooms` page, that reflection was most of the page's CPU. One mirror per value, here, gives the
/// same answers: a nil optional is left out, so a tag climbs on to the enclosing contexts, as it does for a nil
/// field; dictionaries, arrays, lambdas and the library's own protocols are read as before.
enum MustacheTree {
    static func make(_ value: Any) -> Any {
        if isLeaf(value) { return value }
        if value is MustacheParent || value is MustacheCustomRepresentation
            || value is MustacheCustomRenderable || value is MustacheLambda
        {
            return value
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct, .class, .tuple:
            var fields: [String: Any] = [:]
            for child in mirror.children {
                guard let label = child.label, let field = unwrapped(child.value) else { continue }
                fields[label] = make(field)
            }
            return fields
        case .collection:
            return mirror.children.map { make($0.value) }
        case .optional:
            return unwrapped(value).map(make) ?? value
        default:
            return value
        }
    }

    /// The types most values are, which are kept as they are: told apart by their type alone. Why: profiled on the Today
    /// page, checking every value for the library's protocols (a conformance lookup each) and mirroring it was a tenth
    /// of the page's CPU.
    private static let leaves: Set<ObjectIdentifier> = Set(
        ([String.self, Int.self, Bool.self, Double.self, [String: Any].self, [String: [String: String]].self]
            as [Any.Type])
            .map(ObjectIdentifier.init))

    static func isLeaf(_ value: Any) -> Bool { leaves.contains(ObjectIdentifier(type(of: value))) }

    /// The value an optional holds (nil when it is nil); any other value as it is.
    static func unwrapped(_ value: Any) -> Any? {
        if isLeaf(value) { return value }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.flatMap { unwrapped($0.value) }
    }
}
