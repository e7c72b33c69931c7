import QuadMail
import QuadPlatform

extension SMTPSink {
    /// Quad's settings to mail through this sink: from quad@campus.example, with links to
    /// https://quad.campus.example (`TestApp.run(configure:)`).
    package func quad(_ configuration: inout ServerConfiguration) {
        configuration.smtpRelay = try? SMTPRelay(url: "smtp://127.0.0.1:\(port)")
        configuration.mailFrom = MailAddress("quad@campus.example", name: "Quad")
        configuration.publicURL = "https://quad.campus.example"
    }
}
