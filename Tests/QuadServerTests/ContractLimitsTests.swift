import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadAPI
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

/// Every size the contract states is kept by the server: the test walks the contract and, for each limit of each
/// operation's body and query, sends one request just past it (the limit + 1), and expects a 4xx problem naming
/// the field. (A series took 75,000 skipped dates where the contract says 400.)
@Suite struct ContractLimitsTests {
    static let admin: HTTPFields = [.authorization: "Bearer \(TestApp.adminToken)", .contentType: "application/json"]

    /// One request past one limit: where it goes and what it sends.
    struct Violation: CustomStringConvertible, Sendable {
        var method: HTTPRequest.Method
        var path: String
        var query: String?
        var body: Data?
        var field: String
        var description: String { "\(method.rawValue) \(path)\(query.map { "?" + $0 } ?? "") past \(field)" }
    }

    /// Values just past `limit` at `path` (nil when the limit cannot be passed with a JSON number a client can send:
    /// maxima at 2^53 and above, which the decoder refuses as out of range anyway).
    static func pastLimits(_ limit: ContractLimit, path: String) -> [(field: String, value: Any)] {
        switch limit {
        case .object(let properties):
            return properties.sorted { $0.key < $1.key }.flatMap { name, inner in
                pastLimits(inner, path: path.isEmpty ? name : path + "." + name).map { field, value in
                    (field, nest(value, under: name))
                }
            }
        case .array(let min, let max, let items):
            var found: [(String, Any)] = []
            let sample = items.map(Self.sample) ?? 1
            if let max { found.append((path, [Any](repeating: sample, count: max + 1))) }
            if let min, min > 0 { found.append((path, [Any](repeating: sample, count: min - 1))) }
            if let items {
                found += pastLimits(items, path: path + "[0]").map { field, value in (field, [value]) }
            }
            return found
        case .string(let min, let max):
            var found: [(String, Any)] = []
            if let max { found.append((path, String(repeating: "a", count: max + 1))) }
            if let min, min > 0 { found.append((path, String(repeating: "a", count: min - 1))) }
            return found
        case .number(let min, let max):
            var found: [(String, Any)] = []
            if let max, max < 9_007_199_254_740_992 { found.append((path, max + 1)) }
            if let min, min > -9_007_199_254_740_992 { found.append((path, min - 1)) }
            return found
        }
    }

    static func nest(_ value: Any, under name: String) -> Any { [name: value] }

    static func sample(_ limit: ContractLimit) -> Any {
        switch limit {
        case .string(let min, _): String(repeating: "a", count: max(min ?? 1, 1))
        case .number(let min, _): min ?? 1
        case .array: [Any]()
        case .object: [String: Any]()
        }
    }

    /// A path parameter's stand-in: the route matches whatever names nothing.
    static func fill(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { part in
            part.hasPrefix("{") ? (part.contains("Id") && !part.contains("room") ? "1" : "someone") : String(part)
        }.joined(separator: "/")
    }

    static func violations() throws -> [Violation] {
        try AccessTable.operations(Contract.yaml).flatMap { operation -> [Violation] in
            guard let limits = operation.entry.limits else { return [] }
            let method = HTTPRequest.Method(operation.method)!
            let path = fill(operation.path)
            var found: [Violation] = []
            if let body = limits.body {
                found += try pastLimits(body, path: "").map { field, value in
                    // The top level is the body itself; each value was nested under its property's name.
                    Violation(
                        method: method, path: path,
                        body: try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]),
                        field: field)
                }
            }
            for (name, limit) in limits.query {
                for (_, value) in pastLimits(limit, path: "") {
                    let text = (value as? Double).map { String(Int64($0)) } ?? "\(value)"
                    found.append(Violation(method: method, path: path, query: "\(name)=\(text)", field: name))
                }
            }
            return found
        }
    }

    @Test func everyLimitOfTheContractIsKeptByTheServer() async throws {
        let violations = try Self.violations()
        // The contract's limits, so that this test cannot pass by finding none.
        #expect(violations.count >= 40, "\(violations.count) limits found")
        #expect(violations.contains { $0.field == "repeat.skip" })
        try await TestApp.run { _, client in
            for violation in violations {
                let response = try await client.execute(
                    uri: violation.path + (violation.query.map { "?" + $0 } ?? ""), method: violation.method,
                    headers: Self.admin, body: violation.body.map { ByteBuffer(bytes: $0) }
                ) { $0 }
                let expected: HTTPResponse.Status = violation.query == nil ? .unprocessableContent : .badRequest
                #expect(response.status == expected, "\(violation): \(response.status) \(response.text.prefix(300))")
                let fields = (response.json["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
                #expect(fields.contains(violation.field), "\(violation): \(response.text.prefix(300))")
            }
        }
    }
}
