import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import QuadAPI
import QuadCore
import Yams

/// Who may call each route: the contract's `x-quad-access` for every API operation, and what each page or form
/// declares where it is registered (`Routes.on`). `AccessMiddleware` reads the entry of the matched route;
/// the router is refused at start when a route has none (see `uncovered`), so no route is open by omission.
package final class AccessTable: Sendable {
    package struct Entry: Sendable, Equatable {
        package var rule: AccessRule
        /// Whether a personal app link may call it (the original apps' operations: `x-quad-app-link`).
        package var appLink = false
        var operationId: String?
        /// Whether its body is a file (an image, a CSV file): the upload limit, not the JSON one (`BodyLimit`).
        package var upload = false
        /// Whether its answer holds a secret (a token, a key): never kept for an `Idempotency-Key` replay.
        var secretAnswer = false
        /// The sizes the contract allows its body and query (`ContractLimitsMiddleware`).
        package var limits: RequestLimits?
        /// A security event whoever makes it (`x-quad-audit`, or a form's declaration): kept in the audit trail. An
        /// admin's every unsafe request is kept anyway (`AuditMiddleware`).
        package var audit = false
    }

    private struct Key: Hashable {
        package var method: String
        package var path: String
    }

    private let entries: NIOLockedValueBox<[Key: Entry]>

    /// The declarations of `contract` (openapi.yaml).
    package init(contract: Data = Contract.yaml) throws {
        var entries: [Key: Entry] = [:]
        for operation in try Self.operations(contract) {
            entries[Key(method: operation.method, path: Self.shape(operation.path))] = operation.entry
        }
        self.entries = NIOLockedValueBox(entries)
    }

    /// One operation of the contract, with what it declares.
    struct Operation: Sendable {
        package var method: String
        package var path: String
        package var entry: Entry
        /// `security` as written: the schemes it lists, `""` for the empty requirement (anonymous).
        var security: [String]
        package var statuses: [String]
    }

    /// Every operation of the contract; throws when one declares no access or an unknown one.
    static func operations(_ contract: Data) throws -> [Operation] {
        guard let document = try Yams.load(yaml: String(decoding: contract, as: UTF8.self)) as? [String: Any],
            let paths = document["paths"] as? [String: Any]
        else { throw ContractError("openapi.yaml has no paths") }
        let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
        var operations: [Operation] = []
        for (path, item) in paths {
            guard let item = item as? [String: Any] else { continue }
            for method in ["get", "put", "post", "delete", "patch"] {
                guard let operation = item[method] as? [String: Any] else { continue }
                let id = operation["operationId"] as? String
                guard let raw = operation["x-quad-access"] as? String, let rule = AccessRule(rawValue: raw) else {
                    throw ContractError("\(method.uppercased()) \(path) declares no valid x-quad-access")
                }
                let security = (operation["security"] as? [[String: Any]] ?? []).map {
                    $0.keys.sorted().joined(separator: "+")
                }
                let statuses = ((operation["responses"] as? [String: Any]) ?? [:]).keys.map { "\($0)" }
                let bodyTypes = ((operation["requestBody"] as? [String: Any])?["content"] as? [String: Any])?.keys
                let upload =
                    bodyTypes?.contains { $0.hasPrefix("image/") || $0 == "text/csv" || $0 == "application/zip" }
                    ?? false
                operations.append(
                    Operation(
                        method: method.uppercased(), path: path,
                        entry: Entry(
                            rule: rule, appLink: operation["x-quad-app-link"] as? Bool ?? false, operationId: id,
                            upload: upload, secretAnswer: operation["x-quad-secret-answer"] as? Bool ?? false,
                            limits: RequestLimits.from(operation, pathItem: item, schemas: schemas),
                            audit: operation["x-quad-audit"] as? Bool ?? false),
                        security: security, statuses: statuses))
            }
        }
        return operations
    }

    struct ContractError: Error, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    /// Declares a page or form (an API operation's declaration is the contract's).
    func declare(
        _ method: HTTPRequest.Method, _ path: String, _ rule: AccessRule, upload: Bool = false, audit: Bool = false
    ) {
        entries.withLockedValue {
            $0[Key(method: method.rawValue, path: Self.shape(path))] = Entry(rule: rule, upload: upload, audit: audit)
        }
    }

    /// The entry for a matched route (Hummingbird's endpoint path); HEAD is GET's.
    package func entry(_ method: HTTPRequest.Method, endpoint: String) -> Entry? {
        let method = method == .head ? "GET" : method.rawValue
        return entries.withLockedValue { $0[Key(method: method, path: Self.shape(endpoint))] }
    }

    /// What `/metrics` and the audit trail call a matched route: the contract's operationId, else the route itself
    /// (`POST /admin/people/{username}`).
    package func operationName(_ method: HTTPRequest.Method, endpoint: String) -> String {
        entry(method, endpoint: endpoint)?.operationId ?? "\(method.rawValue) \(endpoint)"
    }

    /// The routes that declare nothing: the router is not started with any.
    func uncovered(_ routes: [(path: String, method: HTTPRequest.Method)]) -> [String] {
        routes.filter { entry($0.method, endpoint: $0.path) == nil }.map { "\($0.method.rawValue) \($0.path)" }
    }

    static func isAPI(_ path: String) -> Bool {
        path.hasPrefix("/api/") || path == "/health" || path.hasPrefix("/images/")
    }

    /// `/api/books/:bookId/`, `/api/books/{bookId}` → `/api/books/{}`.
    package static func shape(_ path: String) -> String {
        "/"
            + path.split(separator: "/").map { part in
                part.hasPrefix(":") || (part.hasPrefix("{") && part.hasSuffix("}")) ? "{}" : String(part)
            }.joined(separator: "/")
    }
}
