import Foundation
import QuadAPI
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadLibrary
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer
@testable import QuadSpecials
@testable import QuadTimetable

@Suite struct ContractTests {
    /// The paths openapi.yaml documents (top-level keys under `paths:`).
    static var documentedPaths: Set<String> {
        let lines = String(decoding: Contract.yaml, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "paths:") else { return [] }
        var paths = Set<String>()
        for line in lines[(start + 1)...] {
            if !line.hasPrefix(" "), !line.isEmpty { break }
            if line.hasPrefix("  /"), !line.hasPrefix("   "), line.hasSuffix(":") {
                paths.insert(String(line.dropFirst(2).dropLast()))
            }
        }
        return paths
    }

    @Test func everyAPIRouteIsInTheContract() async throws {
        try await TestDatabase.withDatabase(.sqlite) { database in
            let features = try await Features.start(
                TestApp.configuration(), database: database, logger: TestDatabase.logger
            ) { _ in }
            let router = try await buildRouter(
                features.platform, features: features.all, people: features.accounts)
            let documented = Self.documentedPaths
            #expect(documented.contains("/health"))
            let served = router.routes.map { $0.path.description }.filter { $0.hasPrefix("/api") }
            #expect(!served.isEmpty)
            for path in served {
                // Hummingbird writes parameters as `:name` or `{name}`; the contract as `{name}`.
                let normalised = path.split(separator: "/").map { part in
                    part.hasPrefix(":") ? "{\(part.dropFirst())}" : String(part)
                }.joined(separator: "/")
                #expect(documented.contains("/" + normalised), "\(path) is served but not in openapi.yaml")
            }
        }
    }

    @Test func theContractIsServed() async throws {
        try await TestApp.run { _, client in
            try await client.execute(uri: "/api/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text.hasPrefix("openapi: 3.1"))
            }
        }
    }
}
