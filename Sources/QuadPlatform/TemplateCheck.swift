import Foundation
import Mustache
import NIOConcurrencyHelpers

/// In testing mode (`QUAD_TESTING=on`, as every Swift and browser test runs Quad), each page is checked as it is
/// drawn: every name its template reads, and the partials' it includes, must be a field of a model in reach, as
/// Mustache finds it. Why: a page's model is Swift (`RoomsPage`, beside its routes) and its template is a file beside
/// it, matched by field names nothing else checks; a renamed field would otherwise draw an empty space in silence.
///
/// The check follows Mustache's rules: a name is looked for in the innermost context, then each enclosing one (the
/// page's model inside `{{#page}}`, then the frame); a dotted name's first part climbs and the rest do not; a
/// section's body is checked in each context it is drawn in (every element of a list, none of an empty one). A field
/// that is nil is known (the model has it) though it is left out of what Mustache reads (`MustacheTree`), so a name
/// that finds only nil fields passes, and a section over it is not drawn. Contexts that answer names themselves
/// (`FormValues`, any `MustacheParent` but a dictionary) know every name.
final class TemplateCheck: Sendable {
    /// Each template's text, by name, as the web shell loaded them.
    private let sources: [String: String]
    private let parsed = NIOLockedValueBox<[String: [Node]]>([:])

    init(sources: [String: String]) {
        self.sources = sources
    }

    struct Unknown: Error, CustomStringConvertible {
        let template: String
        let name: String
        var description: String {
            "Template \(template) reads {{\(name)}}, which no model in reach has (a field renamed or misspelled?)."
        }
    }

    /// A field whose value is nil: known to the model, drawn as nothing.
    struct NilField {}

    /// A dictionary of the model (a form's errors by field, the strings table `t`): its keys are data, not fields, so
    /// any key is known (one not there is drawn as nothing).
    struct Map {
        let entries: [String: Any]
    }

    indirect enum Node {
        case name(String)
        case section(String, [Node], inverted: Bool)
        case partial(String)
        /// `{{<layout}}…{{/layout}}`: the parent template drawn with these blocks in place of its own.
        case parent(String, blocks: [String: Block])
        /// `{{$content}}…{{/content}}`: a block, drawn as a child template replaces it, else as it is.
        case block(String, [Node])
    }

    /// A block's replacement, with the template it is written in (for the message).
    struct Block {
        let template: String
        let nodes: [Node]
    }

    /// Checks `template` drawn over `model` (the frame, with the page's model in it).
    func check(_ template: String, model: Any) throws {
        try walk(try nodes(template), template: template, stack: [Self.shape(model)], blocks: [:])
    }

    private func walk(_ nodes: [Node], template: String, stack: [Any], blocks: [String: Block]) throws {
        func walk(_ nodes: [Node], template: String, stack: [Any]) throws {
            try self.walk(nodes, template: template, stack: stack, blocks: blocks)
        }
        for node in nodes {
            switch node {
            case .parent(let name, let own):
                // The child's blocks win over the parent's, and an outer child's over an inner one's.
                try self.walk(
                    try self.nodes(name), template: name, stack: stack,
                    blocks: own.merging(blocks) { _, outer in outer })
            case .block(let name, let body):
                if let replaced = blocks[name] {
                    try walk(replaced.nodes, template: replaced.template, stack: stack)
                } else {
                    try walk(body, template: template, stack: stack)
                }
            case .name(let name):
                if case .unknown = Self.lookup(name, in: stack) { throw Unknown(template: template, name: name) }
            case .partial(let name):
                try walk(try self.nodes(name), template: name, stack: stack)
            case .section(let name, let body, let inverted):
                switch Self.lookup(name, in: stack) {
                case .unknown:
                    throw Unknown(template: template, name: name)
                case .empty:
                    if inverted { try walk(body, template: template, stack: stack) }
                case .found(let value):
                    if inverted {
                        if Self.isFalsy(value) { try walk(body, template: template, stack: stack) }
                    } else if let list = value as? [Any] {
                        for element in list { try walk(body, template: template, stack: stack + [element]) }
                    } else if let flag = value as? Bool {
                        if flag { try walk(body, template: template, stack: stack) }
                    } else {
                        try walk(body, template: template, stack: stack + [value])
                    }
                }
            }
        }
    }

    private static func isFalsy(_ value: Any) -> Bool {
        if let flag = value as? Bool { return !flag }
        if let list = value as? [Any] { return list.isEmpty }
        return false
    }

    enum Lookup {
        case found(Any)
        /// Known, with nothing to draw: a nil field, or a context that answers names itself.
        case empty
        case unknown
    }

    static func lookup(_ name: String, in stack: [Any]) -> Lookup {
        if name == "." { return stack.last.map { .found($0) } ?? .unknown }
        let parts = name.split(separator: ".").map(String.init)
        var value: Any?
        var known = false
        for context in stack.reversed() {
            switch child(parts[0], of: context) {
            case .found(let found):
                value = found
            case .empty:
                known = true
                continue
            case .unknown:
                continue
            }
            break
        }
        guard var current = value else { return known ? .empty : .unknown }
        for part in parts.dropFirst() {
            switch child(part, of: current) {
            case .found(let found): current = found
            case .empty: return .empty
            case .unknown: return .unknown
            }
        }
        return .found(current)
    }

    private static func child(_ name: String, of context: Any) -> Lookup {
        if let fields = context as? [String: Any] {
            guard let value = fields[name] else { return .unknown }
            return value is NilField ? .empty : .found(value)
        }
        if let map = context as? Map { return map.entries[name].map { .found($0) } ?? .empty }
        if let parent = context as? MustacheParent {
            return parent.child(named: name).map { .found(shape($0)) } ?? .empty
        }
        return .unknown
    }

    /// The model as `MustacheTree` gives it to Mustache, but with nil fields kept as `NilField`.
    static func shape(_ value: Any) -> Any {
        if value is String || value is MustacheParent && !(value is [String: Any]) || value is MustacheLambda {
            return value
        }
        if let entries = value as? [String: Any] { return Map(entries: entries.mapValues(shape)) }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct, .class, .tuple:
            var fields: [String: Any] = [:]
            for child in mirror.children {
                guard let label = child.label else { continue }
                fields[label] = MustacheTree.unwrapped(child.value).map(shape) ?? NilField()
            }
            return fields
        case .collection:
            return mirror.children.map { shape($0.value) }
        case .optional:
            return MustacheTree.unwrapped(value).map(shape) ?? NilField()
        default:
            return value
        }
    }

    // MARK: Reading a template

    private func nodes(_ template: String) throws -> [Node] {
        if let nodes = parsed.withLockedValue({ $0[template] }) { return nodes }
        guard let text = sources[template] else { throw Unknown(template: template, name: "> \(template)") }
        let nodes = Self.parse(text, template: template)
        parsed.withLockedValue { $0[template] = nodes }
        return nodes
    }

    /// The tags of a template, sections nested: names, sections, partials, parents and blocks (comments and text
    /// left out).
    static func parse(_ text: String, template: String) -> [Node] {
        var open: [(name: String, sigil: Character, nodes: [Node])] = [("", " ", [])]
        var rest = text[...]
        while let start = rest.range(of: "{{") {
            let triple = rest[start.upperBound...].hasPrefix("{")
            let closing = triple ? "}}}" : "}}"
            let from = triple ? rest.index(after: start.upperBound) : start.upperBound
            guard let end = rest.range(of: closing, range: from..<rest.endIndex) else { break }
            let tag = rest[from..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
            rest = rest[end.upperBound...]
            guard let sigil = tag.first else { continue }
            let name = tag.dropFirst().trimmingCharacters(in: .whitespaces)
            switch sigil {
            case "!": continue
            case "#", "^", "<", "$": open.append((name, sigil, []))
            case "/":
                guard open.count > 1 else { continue }
                let section = open.removeLast()
                let node: Node =
                    switch section.sigil {
                    case "<":
                        .parent(
                            section.name,
                            blocks: section.nodes.reduce(into: [:]) { blocks, node in
                                if case .block(let name, let body) = node {
                                    blocks[name] = Block(template: template, nodes: body)
                                }
                            })
                    case "$": .block(section.name, section.nodes)
                    default: .section(section.name, section.nodes, inverted: section.sigil == "^")
                    }
                open[open.count - 1].nodes.append(node)
            case ">": open[open.count - 1].nodes.append(.partial(name))
            case "&": open[open.count - 1].nodes.append(.name(name))
            default: open[open.count - 1].nodes.append(.name(tag))
            }
        }
        return open[0].nodes
    }
}
