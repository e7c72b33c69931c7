import Foundation
import NIOCore
import QuadTestSupport
import Testing

@testable import QuadMail

/// The SMTP client against aiosmtpd: a message reaches a plain local relay, one that asks for STARTTLS and a password,
/// and one that speaks TLS from the start; a mail client reads back exactly what was written (the name, the subject
/// and the bodies in UTF-8, a line that starts with a dot, the calendar part); and each way it can fail says whether
/// to try again.
@Suite(.enabled(if: SMTPSink.available, "python3 with aiosmtpd (pip install -r e2e/requirements.txt)"))
struct SMTPClientTests {
    static func message(to: String = "ada@example.org") -> MailMessage {
        MailMessage(
            from: MailAddress("quad@campus.example", name: "Quad"), to: MailAddress(to, name: "Zoé Ørsted"),
            subject: "Réservation annulée : Mostafa, vendredi 27 novembre 2026, 10:00–10:30 (a long subject line)",
            text: "Bonjour Zoé,\n\n.a line that starts with a dot\n..and two\n" + String(repeating: "é", count: 120),
            html: "<p>Bonjour <b>Zoé</b> = 1</p>",
            invitation: .init(
                method: "CANCEL",
                ics: "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nMETHOD:CANCEL\r\nPRODID:-//Quad//EN\r\nEND:VCALENDAR\r\n"),
            messageID: "<0123456789abcdef@campus.example>", date: Date(timeIntervalSince1970: 1_795_000_000),
            unsubscribe: "https://campus.example/mail/unsubscribe?token=abc")
    }

    static func send(_ client: SMTPClient, _ message: MailMessage = message()) async throws(SMTPFailure) {
        try await client.send(from: message.from.address, to: [message.to.address], message: message.rendered())
    }

    @Test func aPlainLocalRelayGetsTheMessageAsWritten() async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let relay = try SMTPRelay(url: "smtp://127.0.0.1:\(sink.port)")
        try await Self.send(SMTPClient(relay: relay, heloName: "campus.example"))
        let got = try #require(try sink.messages().first)
        #expect(got["mail_from"] as? String == "quad@campus.example")
        #expect(got["rcpt_tos"] as? [String] == ["ada@example.org"])
        #expect(got["tls"] as? Bool == false)
        #expect(got["subject"] as? String == Self.message().subject)
        #expect(got["to"] as? String == "Zoé Ørsted <ada@example.org>")
        #expect(got["message_id"] as? String == "<0123456789abcdef@campus.example>")
        let headers = try #require(got["headers"] as? [String: String])
        #expect(headers["List-Unsubscribe"] == "<https://campus.example/mail/unsubscribe?token=abc>")
        #expect(headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click")
        #expect(headers["Date"] == "Wed, 18 Nov 2026 11:06:40 +0000")
        #expect((got["defects"] as? [String])?.isEmpty == true)
        let parts = try #require(got["parts"] as? [[String: Any]])
        #expect(parts.map { $0["type"] as? String } == ["text/plain", "text/html", "text/calendar"])
        #expect(parts[0]["body"] as? String == Self.message().text)
        #expect(parts[1]["body"] as? String == Self.message().html)
        #expect((parts[2]["params"] as? [String: String])?["method"] == "CANCEL")
        #expect((parts[2]["body"] as? String)?.contains("METHOD:CANCEL") == true)
    }

    @Test func aRelayWithStartTLSAndAPasswordGetsItEncrypted() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "quad-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (cert, key) = try SMTPSink.certificate(in: folder)
        let sink = try SMTPSink(["--starttls", cert, key, "--auth", "quad:s3cret pass"])
        defer { sink.stop() }
        let relay = try SMTPRelay(url: "smtp://quad:s3cret%20pass@localhost:\(sink.port)")
        #expect(relay.security == .startTLS && relay.description == "smtp://quad@localhost:\(sink.port)")
        // The relay's certificate is trusted only when named.
        let untrusting = SMTPClient(relay: relay, heloName: "campus.example")
        await #expect(throws: SMTPFailure.self) { try await Self.send(untrusting) }
        #expect(try sink.messages().isEmpty)
        try await Self.send(SMTPClient(relay: relay, extraTrustRoots: cert, heloName: "campus.example"))
        let got = try #require(try sink.messages().first)
        #expect(got["tls"] as? Bool == true && got["auth_user"] as? String == "quad")
        // A wrong password: the relay says no, and the mail waits for the operator (it is not the message's fault).
        let wrong = try SMTPRelay(url: "smtp://quad:wrong@localhost:\(sink.port)")
        do {
            try await Self.send(SMTPClient(relay: wrong, extraTrustRoots: cert, heloName: "campus.example"))
            Issue.record("a wrong password was taken")
        } catch {
            guard case .temporary(let why) = error else {
                Issue.record("\(error) should be temporary")
                return
            }
            #expect(why.hasPrefix("the relay refused the user name or password"), "\(why)")
        }
        #expect(try sink.messages().count == 1)
    }

    /// A local relay without a password that offers STARTTLS with a certificate nobody vouches for (Debian's Postfix
    /// out of the box: its "snakeoil" one) still gets the message, encrypted.
    @Test func aLocalRelayWithASelfSignedCertificateGetsItEncrypted() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "quad-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (cert, key) = try SMTPSink.certificate(in: folder)
        let sink = try SMTPSink(["--starttls", cert, key])
        defer { sink.stop() }
        let relay = try SMTPRelay(url: "smtp://localhost:\(sink.port)")
        #expect(relay.security == .startTLSWhenOffered)
        try await Self.send(SMTPClient(relay: relay, heloName: "campus.example"))
        #expect(try sink.messages().first?["tls"] as? Bool == true)
    }

    @Test func aPasswordIsNeverSentToARelayWithoutStartTLS() async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let relay = try SMTPRelay(url: "smtp://quad:secret@127.0.0.1:\(sink.port)")
        do {
            try await Self.send(SMTPClient(relay: relay, heloName: "campus.example"))
            Issue.record("sent without TLS")
        } catch {
            #expect(
                error
                    == .temporary(
                        "smtp://quad@127.0.0.1:\(sink.port) does not offer STARTTLS: the password is not sent in the clear"
                    ))
        }
        #expect(try sink.messages().isEmpty)
    }

    @Test func aRelayWithTLSFromTheStart() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "quad-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (cert, key) = try SMTPSink.certificate(in: folder)
        let sink = try SMTPSink(["--tls", cert, key])
        defer { sink.stop() }
        let relay = try SMTPRelay(url: "smtps://localhost:\(sink.port)")
        try await Self.send(SMTPClient(relay: relay, extraTrustRoots: cert, heloName: "campus.example"))
        #expect(try sink.messages().first?["tls"] as? Bool == true)
    }

    @Test func eachFailureSaysWhetherToTryAgain() async throws {
        let sink = try SMTPSink(["--refuse", "nobody@example.org", "--defer", "1"])
        defer { sink.stop() }
        let client = SMTPClient(
            relay: try SMTPRelay(url: "smtp://127.0.0.1:\(sink.port)"), heloName: "campus.example")
        // 451: later.
        await #expect(throws: SMTPFailure.temporary("the message: 451 4.3.0 Try again later")) {
            try await Self.send(client)
        }
        // 550 for the recipient: never.
        await #expect(throws: SMTPFailure.permanent("RCPT TO: 550 5.1.1 No such mailbox here")) {
            try await Self.send(client, Self.message(to: "nobody@example.org"))
        }
        // Nobody listening: later.
        let closed = SMTPClient(
            relay: SMTPRelay(host: "127.0.0.1", port: 9, security: .startTLSWhenOffered), heloName: "campus.example",
            timeout: .seconds(5))
        await #expect(throws: SMTPFailure.self) { try await Self.send(closed) }
        // An address that would end the command early is refused before a byte is sent.
        await #expect(throws: SMTPFailure.permanent("not an address the envelope can carry")) {
            try await client.send(from: "quad@campus.example", to: ["a@b>\r\nRCPT TO:<c@d"], message: [])
        }
        try await Self.send(client)
        #expect(try sink.messages().count == 1)
    }

    static func envelope(to: String) -> SMTPEnvelope {
        let message = message(to: to)
        return SMTPEnvelope(sender: message.from.address, recipients: [to], message: message.rendered())
    }

    @Test func aRoundGoesOnOneConnectionAndARefusalStopsNoOther() async throws {
        let sink = try SMTPSink(["--refuse", "nobody@example.org", "--defer", "1"])
        defer { sink.stop() }
        let client = SMTPClient(
            relay: try SMTPRelay(url: "smtp://127.0.0.1:\(sink.port)"), heloName: "campus.example")
        let to = ["ada@example.org", "bo@example.org", "nobody@example.org", "a@b>", "cy@example.org"]
        let outcomes = await client.send(to.map(Self.envelope))
        // The first is deferred (451 to its bytes), the third refused (550 to its recipient), the fourth never sent.
        #expect(
            outcomes.map { (try? $0.get()) != nil } == [false, true, false, false, true],
            "\(outcomes)")
        #expect(throws: SMTPFailure.temporary("the message: 451 4.3.0 Try again later")) { try outcomes[0].get() }
        #expect(throws: SMTPFailure.permanent("RCPT TO: 550 5.1.1 No such mailbox here")) { try outcomes[2].get() }
        #expect(throws: SMTPFailure.permanent("not an address the envelope can carry")) { try outcomes[3].get() }
        let got = try sink.messages()
        #expect(got.map { $0["rcpt_tos"] as? [String] } == [["bo@example.org"], ["cy@example.org"]])
        // Each as a mail client reads it, both on one connection.
        #expect(got.map { $0["to"] as? String } == ["Zoé Ørsted <bo@example.org>", "Zoé Ørsted <cy@example.org>"])
        #expect(Set(got.compactMap { $0["peer_port"] as? Int }).count == 1)
    }

    @Test func aRelayThatEndsAConnectionMidwayGetsTheRestOnANewOne() async throws {
        let sink = try SMTPSink(["--per-connection", "2"])
        defer { sink.stop() }
        let client = SMTPClient(
            relay: try SMTPRelay(url: "smtp://127.0.0.1:\(sink.port)"), heloName: "campus.example")
        let to = (1...5).map { "person\($0)@example.org" }
        let outcomes = await client.send(to.map(Self.envelope))
        #expect(outcomes.allSatisfy { (try? $0.get()) != nil }, "\(outcomes)")
        let got = try sink.messages()
        #expect(got.map { ($0["rcpt_tos"] as? [String])?.first } == to)
        let connections = got.compactMap { $0["peer_port"] as? Int }
        #expect(connections.count == 5 && Set(connections).count == 3)

        // Nobody listening: every message waits.
        let closed = SMTPClient(
            relay: SMTPRelay(host: "127.0.0.1", port: 9, security: .startTLSWhenOffered), heloName: "campus.example",
            timeout: .seconds(5))
        let gone = await closed.send(to.map(Self.envelope))
        #expect(gone.allSatisfy { if case .failure(.temporary) = $0 { true } else { false } }, "\(gone)")
    }

    @Test func settingsThatDoNotReadSayWhy() throws {
        #expect(throws: MailSettingError.self) { try SMTPRelay(url: "mail.example.org") }
        #expect(throws: MailSettingError.self) { try SMTPRelay(url: "http://mail.example.org") }
        #expect(throws: MailSettingError.self) { try SMTPRelay(url: "smtp://user@mail.example.org") }
        #expect(throws: MailSettingError.self) { try SMTPRelay(url: "smtp://mail.example.org:587/path") }
        #expect(
            try SMTPRelay(url: "smtp://localhost:25")
                == SMTPRelay(host: "localhost", port: 25, security: .startTLSWhenOffered))
        #expect(try SMTPRelay(url: "smtps://u:p@mail.example.org").port == 465)
    }

    @Test func dotStuffingAndLineEnds() {
        #expect(
            String(decoding: SMTPClient.dotStuffed(Array(".a\nb\r\n..c".utf8)), as: UTF8.self)
                == "..a\r\nb\r\n...c\r\n.\r\n")
    }
}
