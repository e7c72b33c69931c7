import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real OpenID provider for a test: `oidc-provider-mock` through `e2e/oidc_provider.py`, on a free port, stopped
/// at the end. The test sets people's claims, then signs in on the provider's own page as a browser would (its form:
/// the subject, then Authorize).
package final class OpenIDProviderProcess: @unchecked Sendable {
    package let port: Int
    private let process: Process
    private let session: URLSession

    /// Its issuer, as its tokens and discovery document say it.
    package var issuer: String { "http://localhost:\(port)" }

    /// Python and the provider are here (CI installs them: `.ci/run python`); elsewhere these tests are skipped.
    package static var available: Bool {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import oidc_provider_mock, joserfc"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    package init() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", SMTPSink.root.appending(path: "e2e/oidc_provider.py").path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        port = try SMTPSink.listeningPort(output, what: "the OpenID provider")
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    package func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// Sets a person's claims (the provider's own `PUT /users/{sub}`).
    package func setPerson(_ subject: String, _ claims: [String: Any]) async throws {
        var request = URLRequest(url: URL(string: issuer + "/users/" + subject)!)
        request.httpMethod = "PUT"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: claims)
        let (_, response) = try await session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 204 else { throw SinkError("the provider kept no person") }
    }

    /// Signs `subject` in on the provider's page that `address` (Quad's redirect) opens; returns where the provider
    /// sends the browser back (Quad's callback, with the code and the state).
    package func signIn(at address: String, as subject: String) async throws -> URL {
        let url = URL(string: address)!
        let (_, shown) = try await session.data(from: url)
        guard (shown as? HTTPURLResponse)?.statusCode == 200 else {
            throw SinkError("the provider's sign-in page answered \((shown as? HTTPURLResponse)?.statusCode ?? 0)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("sub=\(subject)".utf8)
        let (_, response) = try await session.data(for: request)
        guard let response = response as? HTTPURLResponse, (300..<400).contains(response.statusCode),
            let location = response.value(forHTTPHeaderField: "Location"), let back = URL(string: location)
        else { throw SinkError("the provider did not send the browser back") }
        return back
    }

    /// A browser's GET that does not follow redirects (they are the test's to follow), with `cookie` sent.
    package func open(_ url: URL, cookie: String? = nil) async throws -> HTTPURLResponse {
        var request = URLRequest(url: url)
        if let cookie { request.setValue(cookie, forHTTPHeaderField: "Cookie") }
        let (_, response) = try await session.data(for: request)
        guard let response = response as? HTTPURLResponse else { throw SinkError("no HTTP answer from \(url)") }
        return response
    }

    /// The next ID token the provider gives is replaced by one made wrong in this way (`e2e/oidc_provider.py`).
    package func tamper(_ mode: String) async throws { try await post("/test/tamper", ["mode": mode]) }

    /// From now on the provider's keys and tokens carry no `kid` (as LemonLDAP::NG's do when none is set).
    package func nameNoKeys() async throws { try await post("/test/unnamed-keys", [:]) }

    /// The provider signs with a new key from now on.
    package func rotateKeys() async throws { try await post("/test/rotate", [:]) }

    /// What each sign-in asked the provider with (its authorization requests' parameters).
    package func authorizations() async throws -> [[String: String]] {
        let (data, _) = try await session.data(from: URL(string: issuer + "/test/authorizations")!)
        return try JSONSerialization.jsonObject(with: data) as? [[String: String]] ?? []
    }

    private func post(_ path: String, _ body: [String: String]) async throws {
        var request = URLRequest(url: URL(string: issuer + path)!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (_, response) = try await session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 204 else { throw SinkError("the provider refused \(path)") }
    }
}

/// The browser's redirects are the test's to follow (they lead to Quad, which the test drives itself).
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
