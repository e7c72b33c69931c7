import Foundation
import Hummingbird
import Logging
import NIOCore
import OpenAPIRuntime
import QuadCore
import SQLKit

/// The sizes the contract allows a request (`maxLength`, `minLength`, `maxItems`, `minItems`, `minimum`, `maximum`),
/// read from it once and checked before any handler runs.
///
/// Why: the generated interface decodes types, not sizes, so a limit that was only written in the contract was not
/// kept (a booking series took 75,000 skipped dates where the contract allows 400). Handlers still check what they
/// mean (a name's characters, a date's range); this makes every number the contract states true.
package indirect enum ContractLimit: Sendable, Equatable {
    case object([String: ContractLimit])
    case array(minItems: Int?, maxItems: Int?, items: ContractLimit?)
    case string(minLength: Int?, maxLength: Int?)
    case number(minimum: Double?, maximum: Double?)

    /// The limits a schema states, nil when it states none anywhere; `$ref`s to `components/schemas` are followed.
    static func from(_ schema: Any?, schemas: [String: Any], depth: Int = 0) -> ContractLimit? {
        guard depth < 16, var schema = schema as? [String: Any] else { return nil }
        if let ref = schema["$ref"] as? String {
            let name = ref.replacingOccurrences(of: "#/components/schemas/", with: "")
            guard let target = schemas[name] as? [String: Any] else { return nil }
            schema = target
        }
        let types = Set((schema["type"] as? [String]) ?? [(schema["type"] as? String)].compactMap { $0 })
        if let properties = schema["properties"] as? [String: Any] {
            let limits = properties.compactMapValues { from($0, schemas: schemas, depth: depth + 1) }
            return limits.isEmpty ? nil : .object(limits)
        }
        if types.contains("array") || schema["items"] != nil {
            let items = from(schema["items"], schemas: schemas, depth: depth + 1)
            let min = schema["minItems"] as? Int
            let max = schema["maxItems"] as? Int
            return min == nil && max == nil && items == nil ? nil : .array(minItems: min, maxItems: max, items: items)
        }
        if types.contains("string") {
            let min = schema["minLength"] as? Int
            let max = schema["maxLength"] as? Int
            return min == nil && max == nil ? nil : .string(minLength: min, maxLength: max)
        }
        if types.contains("integer") || types.contains("number") {
            let min = number(schema["minimum"])
            let max = number(schema["maximum"])
            return min == nil && max == nil ? nil : .number(minimum: min, maximum: max)
        }
        return nil
    }

    private static func number(_ value: Any?) -> Double? {
        switch value {
        case let value as Int: Double(value)
        case let value as Double: value
        case let value as String: Double(value)
        default: nil
        }
    }

    /// What in `value` (as `JSONSerialization` reads it) is past a limit, each error named by its path
    /// (`repeat.skip`). A value of another type is left to the decoder, which says so.
    func check(_ value: Any, at path: String, into errors: inout [FieldError]) {
        let field = path.isEmpty ? "body" : path
        switch (self, value) {
        case (.object(let properties), let object as [String: Any]):
            for (name, limit) in properties.sorted(by: { $0.key < $1.key }) {
                guard let inner = object[name], !(inner is NSNull) else { continue }
                limit.check(inner, at: path.isEmpty ? name : path + "." + name, into: &errors)
            }
        case (.array(let min, let max, let items), let array as [Any]):
            if let max, array.count > max {
                errors.append(FieldError(field: field, message: "At most \(max) items (\(array.count) were sent)."))
                return
            }
            if let min, array.count < min {
                errors.append(FieldError(field: field, message: "At least \(min) items (\(array.count) were sent)."))
            }
            if let items {
                for (index, item) in array.enumerated() where !(item is NSNull) {
                    items.check(item, at: "\(field)[\(index)]", into: &errors)
                }
            }
        case (.string(let min, let max), let text as String):
            // JSON Schema counts characters as code points.
            let length = text.unicodeScalars.count
            if let max, length > max {
                errors.append(FieldError(field: field, message: "At most \(max) characters (\(length) were sent)."))
            } else if let min, length < min {
                errors.append(FieldError(field: field, message: "At least \(min) characters."))
            }
        case (.number(let min, let max), let number as NSNumber):
            let value = number.doubleValue
            if let max, value > max {
                errors.append(FieldError(field: field, message: "At most \(Self.text(max))."))
            } else if let min, value < min {
                errors.append(FieldError(field: field, message: "At least \(Self.text(min))."))
            }
        default:
            break
        }
    }

    private static func text(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}

/// An operation's limits: its JSON body's, and its query parameters' by name.
package struct RequestLimits: Sendable, Equatable {
    package var body: ContractLimit?
    package var query: [String: ContractLimit]

    static func from(_ operation: [String: Any], pathItem: [String: Any], schemas: [String: Any]) -> RequestLimits? {
        let content = (operation["requestBody"] as? [String: Any])?["content"] as? [String: Any]
        let body = ContractLimit.from(
            (content?["application/json"] as? [String: Any])?["schema"], schemas: schemas)
        var query: [String: ContractLimit] = [:]
        let parameters =
            (operation["parameters"] as? [[String: Any]] ?? []) + (pathItem["parameters"] as? [[String: Any]] ?? [])
        for parameter in parameters where parameter["in"] as? String == "query" {
            if let name = parameter["name"] as? String,
                let limit = ContractLimit.from(parameter["schema"], schemas: schemas)
            {
                query[name] = limit
            }
        }
        return body == nil && query.isEmpty ? nil : RequestLimits(body: body, query: query)
    }
}

/// Checks each request against its operation's `RequestLimits`: a query parameter past one is a 400 at once; a body
/// past one is a 422 naming each field, but only after the handler had its say, so a client still hears of every
/// field at fault at once, in the handler's words ("width 20 is wider than the canvas") where it has them. Until
/// then the handler may read but not write (`ContractLimitGuard`), so a body past the limits changes nothing
/// whatever the handler does. Runs after `BodyLimitMiddleware`, which has
/// buffered the body.
struct ContractLimitsMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    package let table: AccessTable

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        guard let limits = context.endpointPath.flatMap({ table.entry(request.method, endpoint: $0) })?.limits else {
            return try await next(request, context)
        }
        var errors: [FieldError] = []
        for (name, limit) in limits.query.sorted(by: { $0.key < $1.key }) {
            guard let raw = request.uri.queryParameters.get(name) else { continue }
            // Only what reads as the parameter's type is sized here; the rest is the decoder's 400.
            let value: Any? =
                switch limit {
                case .number: Double(raw).map { NSNumber(value: $0) }
                case .string: raw
                default: nil
                }
            if let value { limit.check(value, at: name, into: &errors) }
        }
        guard errors.isEmpty else {
            throw Problem(
                .badRequest, detail: errors.map { "\($0.field): \($0.message)" }.joined(separator: " "), errors: errors)
        }
        guard let bodyLimit = limits.body,
            request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true
        else { return try await next(request, context) }
        var request = request
        let buffer = try await request.collectBody(upTo: BodyLimit.json)
        if let json = try? JSONSerialization.jsonObject(with: Data(buffer: buffer), options: [.fragmentsAllowed]) {
            bodyLimit.check(json, at: "", into: &errors)
        }
        guard !errors.isEmpty else { return try await next(request, context) }
        let past = ValidationFailure(errors)
        do {
            _ = try await ContractLimitGuard.$refusal.withValue(past) { try await next(request, context) }
        } catch {
            if let failure = Self.validationFailure(in: error) {
                let named = Set(failure.errors.map(\.field))
                throw ValidationFailure(failure.errors + errors.filter { !named.contains($0.field) })
            }
        }
        throw past
    }

    /// The handler's own field errors, as thrown or as the generated interface wraps them.
    private static func validationFailure(in error: any Error) -> ValidationFailure? {
        if let failure = error as? ValidationFailure { return failure }
        if let server = error as? ServerError { return validationFailure(in: server.underlyingError) }
        return nil
    }
}

/// While a body past the contract's limits is with its handler (`ContractLimitsMiddleware`), the database lets it
/// read and nothing else (`ReadOnlySQL`): a write, or a transaction, throws the limits' failure instead.
package enum ContractLimitGuard {
    @TaskLocal package static var refusal: ValidationFailure?
}

/// A connection that runs what only reads (`SELECT`, `WITH … SELECT`) and refuses anything else with the limits'
/// failure: what a handler gets while a body past the contract's limits is with it.
struct ReadOnlySQL: SQLDatabase {
    let base: any SQLDatabase
    let refusal: ValidationFailure

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    private func reads(_ query: any SQLExpression) -> Bool {
        let text = base.serialize(query).sql.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        return (text.hasPrefix("SELECT") || text.hasPrefix("WITH")) && !text.contains("FOR UPDATE")
    }

    func execute(
        sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) -> EventLoopFuture<
        Void
    > {
        reads(query) ? base.execute(sql: query, onRow) : eventLoop.makeFailedFuture(refusal)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        guard reads(query) else { throw refusal }
        try await base.execute(sql: query, onRow)
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }
}
