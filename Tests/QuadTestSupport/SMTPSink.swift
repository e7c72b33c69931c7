import Foundation

/// A real SMTP server for a test: aiosmtpd through `e2e/smtp_sink.py`, in a folder of its own, stopped at the end.
/// What it accepted is read back as Python's `email` package parsed it.
package final class SMTPSink: @unchecked Sendable {
    package let port: Int
    package let folder: URL
    private let process: Process

    /// Python and aiosmtpd are here (CI installs them: `.ci/run python`); elsewhere the mail tests are skipped.
    package static var available: Bool {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import aiosmtpd"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Starts it with `arguments` (`--starttls CERT KEY`, `--auth USER:PASSWORD`, `--refuse ADDRESS`…) and waits
    /// until it listens.
    package init(_ arguments: [String] = []) throws {
        folder = FileManager.default.temporaryDirectory.appending(path: "quad-sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", Self.root.appending(path: "e2e/smtp_sink.py").path, "--dir", folder.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        port = try Self.listeningPort(output, what: "the SMTP sink")
    }

    /// The port a test's peer says it listens on, in its first line ("listening on PORT").
    static func listeningPort(_ output: Pipe, what: String) throws -> Int {
        var said = Data()
        while !said.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw SinkError("\(what) stopped before it listened") }
            said += chunk
        }
        let line = String(decoding: said, as: UTF8.self)
        guard
            let port = line.split(separator: " ").last.flatMap({
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            })
        else { throw SinkError("\(what) said \(line)") }
        return port
    }

    package func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The messages accepted so far, in order.
    package func messages() throws -> [[String: Any]] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
            .map { name in
                let data = try Data(contentsOf: folder.appending(path: name))
                return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
            }
    }

    /// A certificate for `localhost` and its key, made for this test (`openssl`), with the certificate's path to
    /// trust.
    package static func certificate(in folder: URL) throws -> (cert: String, key: String) {
        let cert = folder.appending(path: "cert.pem").path
        let key = folder.appending(path: "key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else { throw SinkError("openssl could not make a certificate") }
        return (cert, key)
    }
}

package struct SinkError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
