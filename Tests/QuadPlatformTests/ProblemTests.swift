import Foundation
import Hummingbird
import HummingbirdTesting
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

/// Every API error is an RFC 9457 problem a client can read, never a bare 500 or an empty body.
@Suite struct ProblemTests {
    struct Note: Decodable { var title: String }
    struct Secret: Error { let password = "hunter2" }

    static func testRoutes(_ routes: Routes) {
        routes.on(.post, "/api/test/notes", .public) { request, context -> HTTPResponse.Status in
            var request = request
            _ = try await request.decodeJSON(Note.self, context: context)
            return .created
        }
        routes.on(.get, "/api/test/crash", .public) { _, _ -> String in throw Secret() }
        routes.on(.get, "/test/refused", .public) { _, _ -> String in
            throw Problem(.badRequest, detail: "Not like that.")
        }
    }

    @Test func unknownRouteIsAProblem() async throws {
        try await TestApp.run { _, client in
            try await client.execute(uri: "/api/nothing-here", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.json["status"] as? Int == 404)
                #expect(response.json["title"] as? String == "Not Found")
                #expect((response.json["detail"] as? String)?.contains("/api/nothing-here") == true)
            }
        }
    }

    @Test func wrongMethodIs405WithAllow() async throws {
        try await TestApp.run { _, client in
            try await client.execute(uri: "/health", method: .delete) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET")
                #expect(response.headers[.contentType] == "application/problem+json")
            }
            // A literal segment is its own route, as the router sees it: not the parameter route beside it.
            for (path, allowed) in [
                ("/api/books/delete", "POST"), ("/api/specials/order", "PUT"), ("/api/specials/all", "GET"),
            ] {
                try await client.execute(uri: path, method: .patch) { response in
                    #expect(response.status == .methodNotAllowed, "\(path)")
                    #expect(response.headers[.allow] == allowed, "\(path)")
                }
            }
            try await client.execute(uri: "/api/books/delete", method: .delete) {
                #expect($0.status == .methodNotAllowed && $0.headers[.allow] == "POST")
            }
        }
    }

    @Test func malformedJSONIs400() async throws {
        try await TestApp.run(routes: Self.testRoutes) { _, client in
            try await client.execute(
                uri: "/api/test/notes", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: "{\"title\": ")
            ) { response in
                #expect(response.status == .badRequest)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.json["detail"] as? String == "The body is not valid JSON.")
            }
            try await client.execute(
                uri: "/api/test/notes", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: "{}")
            ) { response in
                #expect(response.status == .badRequest)
                #expect(response.json["detail"] as? String == "The field title is missing.")
            }
        }
    }

    @Test func bodiesOverTheLimitAre413() async throws {
        try await TestApp.run(routes: Self.testRoutes) { _, client in
            let big = ByteBuffer(repeating: UInt8(ascii: " "), count: BodyLimit.json + 1)
            try await client.execute(
                uri: "/api/test/notes", method: .post, headers: [.contentType: "application/json"], body: big
            ) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.json["detail"] as? String == "The body is larger than the limit of 1 MiB.")
            }
        }
    }

    @Test func anUnexpectedErrorIs500WithARequestIdAndNoInternals() async throws {
        try await TestApp.run(routes: Self.testRoutes) { _, client in
            try await client.execute(uri: "/api/test/crash", method: .get) { response in
                #expect(response.status == .internalServerError)
                #expect(response.headers[.contentType] == "application/problem+json")
                let id = try #require(response.json["requestId"] as? String)
                #expect(!id.isEmpty)
                #expect((response.json["detail"] as? String)?.contains(id) == true)
                #expect(!response.text.contains("hunter2") && !response.text.contains("Secret"))
            }
        }
    }

    @Test func webPagesGetAnHTMLErrorPage() async throws {
        try await TestApp.run { _, client in
            try await client.execute(uri: "/no-such-page", method: .get, headers: [.accept: "text/html"]) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
                #expect(response.text.contains("This page does not exist."))
                #expect(response.text.contains("Nothing is at /no-such-page."))
            }
        }
    }

    /// In French, an error page says what happened in French: a 404 with no English sentence left in it; another
    /// problem with its own (English) sentence marked as English, for screen readers.
    @Test func anErrorPageInFrenchIsInFrench() async throws {
        try await TestApp.run(routes: Self.testRoutes) { _, client in
            let french: HTTPFields = [.accept: "text/html", .acceptLanguage: "fr"]
            try await client.execute(uri: "/no-such-page", method: .get, headers: french) { response in
                #expect(response.status == .notFound)
                #expect(response.text.contains("<h1>Cette page n’existe pas.</h1>"))
                #expect(response.text.contains("<p>Vérifiez l’adresse, ou repartez de l’accueil.</p>"))
                #expect(!response.text.contains("Nothing is at"))
                #expect(!response.text.contains(#"<p class="muted">"#))
            }
            try await client.execute(uri: "/test/refused", method: .get, headers: french) { response in
                #expect(response.status == .badRequest)
                #expect(response.text.contains("<p>Réessayez, ou repartez de l’accueil.</p>"))
                #expect(response.text.contains(#"<p lang="en">Not like that.</p>"#))
            }
        }
    }

    /// A 500 from an operation of the generated interface is logged with what went wrong and where, never with
    /// the request's headers (its bearer token among them).
    @Test func aServerErrorIsLoggedWithoutTheRequestsCredentials() async throws {
        let logs = LogLines()
        try await TestApp.run(logger: logs.logger) { app, client in
            let kier = try await app.signedIn("kier")
            try await app.platform.database.withConnection { try await $0.raw("DROP TABLE room_bookings").run() }
            try await client.execute(uri: "/api/me/bookings", method: .get, headers: kier) { response in
                #expect(response.status == .internalServerError)
            }
            let token = try #require(kier[.authorization]?.dropFirst("Bearer ".count))
            #expect(logs.all.contains("listMyBookings") && logs.all.contains("room_bookings"))
            #expect(!logs.all.contains(token) && !logs.all.lowercased().contains("authorization"))
        }
    }
}
