import Foundation
import Hummingbird
import HummingbirdTesting
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite struct WebShellTests {
    @Test func theHomePageSpeaksTheBrowsersLanguage() async throws {
        try await TestApp.run { _, client in
            try await client.execute(uri: "/", method: .get, headers: [.acceptLanguage: "fr-CA,fr;q=0.9,en;q=0.5"]) {
                #expect($0.text.contains("<html lang=\"fr\">"))
                #expect($0.text.contains("<h1>Bienvenue sur Quad</h1>"))
                #expect($0.text.contains("aria-label=\"Langue\""))
            }
            try await client.execute(uri: "/", method: .get, headers: [.acceptLanguage: "de, en;q=0.3"]) {
                #expect($0.text.contains("<h1>Welcome to Quad</h1>"))
            }
        }
    }

    @Test func choosingALanguageIsRemembered() async throws {
        try await TestApp.run { _, client in
            let cookie = try await client.execute(uri: "/?lang=fr", method: .get) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/")
                return try #require(response.headers[.setCookie])
            }
            #expect(cookie.hasPrefix("quad_lang=fr"))
            #expect(cookie.contains("SameSite=Lax"))
            try await client.execute(
                uri: "/", method: .get, headers: [.cookie: "quad_lang=fr", .acceptLanguage: "en"]
            ) { #expect($0.text.contains("<html lang=\"fr\">")) }
        }
    }

    @Test func theShellHasItsLandmarks() async throws {
        try await TestApp.run { _, client in
            try await client.execute(uri: "/", method: .get) { response in
                let html = response.text
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(html.contains("<a class=\"skip-link\" href=\"#main\">Skip to content</a>"))
                #expect(html.contains("<main id=\"main\""))
                #expect(html.contains("<nav class=\"services\" aria-label=\"Services\">"))
                #expect(html.contains("hreflang=\"fr\""))
                #expect(html.contains("name=\"viewport\""))
            }
        }
    }
}
