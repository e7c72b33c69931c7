import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import QuadCore
import QuadTestSupport
import Testing

@testable import QuadAccounts
@testable import QuadLibrary
@testable import QuadPlatform
@testable import QuadRooms
@testable import QuadServer
@testable import QuadSpecials
@testable import QuadTimetable

/// Paths have one form: the router would match `//api/books/delete` as `/api/books/delete`, so every other
/// form is refused before routing, whatever the method.
@Suite struct FrontDoorTests {
    static let nonCanonical = [
        "//api/books/delete", "/api//books/delete", "/api/./books/delete", "/api/books/../books/delete",
        "/api/books%2Fdelete", "/api/books%2fdelete", "/api/%2e%2e/api/books/delete", "/api\\books/delete",
        "/api/books/%2E/delete", "//evil.example/", "/rooms%5C..%5Cadmin",
    ]

    @Test(arguments: nonCanonical)
    func aNonCanonicalPathIsRefusedBeforeRouting(path: String) async throws {
        let logs = LogLines()
        try await TestApp.run(logger: logs.logger) { app, client in
            let ada = try await app.signedIn("ada")
            for method in [HTTPRequest.Method.get, .post] {
                let response = try await client.execute(
                    uri: path, method: method, headers: ada, body: ByteBuffer(string: #"{"ids": [1]}"#)
                ) { $0 }
                #expect(response.status == .badRequest, "\(method) \(path)")
                #expect(response.json["type"] as? String == "urn:quad:problem:non-canonical-path")
                #expect(response.headers[.location] == nil)
                // Logged as every request is, with the id the answer carries.
                let id = try #require(response.headers[HTTPField.Name("X-Request-Id")!], "\(method) \(path)")
                let line = logs.all.split(separator: "\n").first { $0.contains(id) } ?? ""
                #expect(line.contains("info \(method) ") && line.contains(" 400 ["), "\(method) \(path): \(line)")
            }
        }
    }

    @Test func canonicalPathsAndTheOriginalsTrailingSlashStillWork() async throws {
        try await TestApp.run { _, client in
            try await client.execute(uri: "/api/books/", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/rooms?lang=en", method: .get) { #expect($0.status == .seeOther) }
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test func canonicalPathRules() {
        #expect(CanonicalPath("/api/books/12/?q=a//b") != nil)
        #expect(CanonicalPath("/") != nil)
        #expect(CanonicalPath("api/books") == nil)
        #expect(CanonicalPath("/a\tb") == nil)
        #expect(CanonicalPath("/a%00b") == nil)
        #expect(CanonicalPath("/a/..") == nil)
        #expect(CanonicalPath("/a/.%2e/b") == nil)
    }
}
