import Foundation
import Hummingbird
import Logging
import NIOCore
import QuadCore
import QuadKit

/// `quad login --sso`: the browser signs the person in at the organisation's provider through Quad, and Quad sends
/// it back to this machine (RFC 8252: a loopback address, a port chosen now) with a one-time code, which is traded
/// for a token with this sign-in's PKCE verifier. Quad keeps the provider's client secret; this never sees it.
struct OrganisationLogin {
    let context: ClientContext
    let openBrowser: Bool
    /// How long the person has to finish signing in.
    static let patience: Duration = .seconds(300)

    func run() async throws -> (token: String, person: Person) {
        let (targets, arrived) = AsyncStream<String>.makeStream()
        let (ports, bound) = AsyncStream<Int>.makeStream()
        let router = Router()
        router.get("/quad-sign-in") { request, _ -> Response in
            arrived.yield(request.uri.description)
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: Self.page)))
        }
        var logger = Logger(label: "quad-login")
        logger.logLevel = .critical
        // The loopback listener: Hummingbird, as `quad serve` uses, on 127.0.0.1 only.
        let listener = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                if let port = channel.localAddress?.port { bound.yield(port) }
                bound.finish()
            }, logger: logger)
        let serving = Task { try await listener.runService() }
        defer { serving.cancel() }
        guard let port = await ports.first(where: { _ in true }) else {
            throw CLIError.failed("could not listen on this machine for the sign-in's answer")
        }
        let signIn = OrganisationSignIn(server: context.serverURL, port: port)
        FileHandle.standardError.write(
            Data("Sign in with your organisation's account in the browser:\n  \(signIn.address.absoluteString)\n".utf8))
        if openBrowser { Self.open(signIn.address) }
        let timeout = Task {
            try await Task.sleep(for: Self.patience)
            arrived.finish()
        }
        defer { timeout.cancel() }
        for await target in targets {
            guard let code = signIn.code(from: target) else { continue }
            return try await context.client.signIn(signIn, code: code)
        }
        throw CLIError.failed("the sign-in did not finish within \(Self.patience.components.seconds / 60) minutes")
    }

    /// Opens the person's browser, where there is one to open (`xdg-open`, macOS's `open`); the address is printed
    /// either way.
    static func open(_ address: URL) {
        #if os(macOS)
            let opener = "open"
        #else
            let opener = "xdg-open"
        #endif
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [opener, address.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }

    static let page = """
        <!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">
        <title>Quad</title><main><h1>Quad</h1><p>The sign-in is back with the quad command: you can close this tab.</p></main>
        """
}
