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
        if value is String || value is MustacheParent || value is MustacheCustomRepresentation
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

    /// The value an optional holds (nil when it is nil); any other value as it is.
    static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.flatMap { unwrapped($0.value) }
    }
}
