import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Hands one message to the operator's relay over SMTP (RFC 5321): the greeting, EHLO, STARTTLS or TLS from the
/// start, AUTH PLAIN or LOGIN, the envelope, and the message dot-stuffed. Written here because no SMTP client is among
/// the Swift packages available; it covers only what a relay needs (no pipelining, no mail exchangers: the relay
/// delivers). Every failure says whether to try again later (`SMTPFailure.temporary`) or to give up.
public struct SMTPClient: Sendable {
    public let relay: SMTPRelay
    let tls: TLSConfiguration
    /// Said in EHLO: the public address's host.
    let heloName: String
    let group: any EventLoopGroup
    /// Longest wait for any one reply (and for the connection).
    let timeout: TimeAmount

    /// `extraTrustRoots`: a PEM file of certificates trusted besides the system's (a relay with a private CA).
    public init(
        relay: SMTPRelay, extraTrustRoots: String? = nil, heloName: String,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, timeout: TimeAmount = .seconds(30)
    ) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let extraTrustRoots { tls.additionalTrustRoots = [.file(extraTrustRoots)] }
        // A relay without a password is encrypted to when it offers STARTTLS, its certificate unchecked: opportunistic
        // security (RFC 7435, Postfix's own `smtp_tls_security_level = may`). Refusing a certificate there would not
        // stop an attacker, who can strip the offer, but would stop the mail: Debian's Postfix offers STARTTLS with a
        // self-signed certificate out of the box. With a password, or TLS from the start, it must verify.
        if relay.security == .startTLSWhenOffered { tls.certificateVerification = .none }
        self.relay = relay
        self.tls = tls
        self.heloName = heloName
        self.group = group
        self.timeout = timeout
    }

    /// Sends `message` (its headers and body, lines ended by CRLF) from `sender` to each of `recipients`.
    public func send(from sender: String, to recipients: [String], message: [UInt8]) async throws(SMTPFailure) {
        try await send([SMTPEnvelope(sender: sender, recipients: recipients, message: message)])[0].get()
    }

    /// Sends each of `envelopes`, in order, on one connection: the greeting, TLS and sign-in once, then a transaction
    /// a message. Each has its own outcome: a message the relay refuses does not stop the others. When the relay ends
    /// the connection midway (421, a temporary refusal of `MAIL FROM` once it took some: how relays limit messages per
    /// connection), the rest go on a new one; when a connection takes none, the rest wait with its failure.
    ///
    /// Why one connection for many: measured with `Benchmarks/run booking-storm-mail`, a connection a message (its
    /// connect, greeting, EHLO and QUIT) was a share of Quad's CPU and most of the relay's.
    public func send(_ envelopes: [SMTPEnvelope]) async -> [Result<Void, SMTPFailure>] {
        var outcomes = envelopes.map(Self.refusal)
        var rest = outcomes.indices.filter { outcomes[$0] == nil }[...]
        while !rest.isEmpty {
            let (done, ended) = await session(rest.map { envelopes[$0] })
            for (index, outcome) in zip(rest, done) { outcomes[index] = outcome }
            rest = rest.dropFirst(done.count)
            guard let ended else { break }
            if done.isEmpty {
                for index in rest { outcomes[index] = .failure(ended) }
                break
            }
        }
        return outcomes.map { $0 ?? .failure(.temporary("not sent")) }
    }

    /// An envelope refused before a byte is sent: an address that could end a command early, or be two; none at all.
    private static func refusal(_ envelope: SMTPEnvelope) -> Result<Void, SMTPFailure>? {
        for address in [envelope.sender] + envelope.recipients where address.contains(where: { "\r\n<> ".contains($0) })
        {
            return .failure(.permanent("not an address the envelope can carry"))
        }
        return envelope.recipients.isEmpty ? .failure(.permanent("no recipient")) : nil
    }

    /// The relay ends the connection: the message in hand, and those after it, are for another.
    private struct ConnectionEnded: Error {
        let failure: SMTPFailure
    }

    /// One connection: `envelopes` in order until the relay ends it. The outcomes of the first ones (all of them, or
    /// fewer when it ended, with why).
    private func session(
        _ envelopes: [SMTPEnvelope]
    ) async -> (
        outcomes: [Result<Void, SMTPFailure>], ended: SMTPFailure?
    ) {
        var outcomes: [Result<Void, SMTPFailure>] = []
        do {
            try await connect { exchange in
                var handedOver = false
                for envelope in envelopes {
                    do {
                        try await exchange.transaction(envelope, handedOver: handedOver)
                        outcomes.append(.success(()))
                        handedOver = true
                    } catch let failure as SMTPFailure {
                        outcomes.append(.failure(failure))
                        // Whatever the transaction got to, the next starts clean.
                        _ = try await exchange.command("RSET", [250])
                    }
                }
            }
        } catch let ended as ConnectionEnded {
            return (outcomes, ended.failure)
        } catch let failure as SMTPFailure {
            return (outcomes, failure)
        } catch {
            // Refused, reset, timed out, or TLS that did not verify: the relay or the way to it, for now.
            return (outcomes, .temporary("\(relay.description): \(error)"))
        }
        return (outcomes, nil)
    }

    /// Connects, is greeted, says hello (with TLS and the password as the relay's settings ask), hands `body` the
    /// exchange, then says QUIT.
    private func connect(_ body: (inout Exchange) async throws -> Void) async throws {
        let context = try NIOSSLContext(configuration: tls)
        // An IP address is not a name a certificate is checked against (nor sent as SNI).
        let serverName = Self.isIPAddress(relay.host) ? nil : relay.host
        let secureFromStart = relay.security == .tls
        let timeout = self.timeout
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .connect(host: relay.host, port: relay.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handlers = channel.pipeline.syncOperations
                    if secureFromStart {
                        try handlers.addHandler(try NIOSSLClientHandler(context: context, serverHostname: serverName))
                    }
                    try handlers.addHandler(IdleStateHandler(readTimeout: timeout))
                    try handlers.addHandler(CloseWhenIdle())
                    try handlers.addHandler(ByteToMessageHandler(SMTPReplyDecoder()))
                    return try NIOAsyncChannel<SMTPReply, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            var exchange = Exchange(replies: inbound.makeAsyncIterator(), outbound: outbound, relay: relay)
            _ = try await exchange.reply([220], to: "greeting")
            var hello = try await exchange.command("EHLO \(heloName)", [250])
            if relay.security != .tls {
                if hello.offers("STARTTLS") {
                    _ = try await exchange.command("STARTTLS", [220])
                    // TLS goes first in the pipeline, beneath the replies; made on the connection's own thread.
                    let connection = channel.channel
                    try await connection.eventLoop.submit {
                        try connection.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: context, serverHostname: serverName), position: .first)
                    }.get()
                    // What was said before TLS counts for nothing (RFC 3207): hello again.
                    hello = try await exchange.command("EHLO \(heloName)", [250])
                } else if relay.security == .startTLS {
                    throw SMTPFailure.temporary(
                        "\(relay.description) does not offer STARTTLS: the password is not sent in the clear")
                }
            }
            if let username = relay.username, let password = relay.password {
                do {
                    if hello.offers("AUTH", "PLAIN") || !hello.offers("AUTH", "LOGIN") {
                        let secret = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
                        _ = try await exchange.command("AUTH PLAIN \(secret)", [235], what: "AUTH")
                    } else {
                        _ = try await exchange.command("AUTH LOGIN", [334], what: "AUTH")
                        _ = try await exchange.command(Data(username.utf8).base64EncodedString(), [334], what: "AUTH")
                        _ = try await exchange.command(Data(password.utf8).base64EncodedString(), [235], what: "AUTH")
                    }
                } catch SMTPFailure.permanent(let why) {
                    // The operator's setting, not the message: it waits until the setting is right.
                    throw SMTPFailure.temporary("the relay refused the user name or password (\(why))")
                }
            }
            exchange.hello = hello
            try await body(&exchange)
            // Done: a QUIT that goes wrong changes nothing.
            _ = try? await exchange.command("QUIT", [221])
        }
    }

    /// Commands and replies on one connection.
    private struct Exchange {
        var replies: NIOAsyncChannelInboundStream<SMTPReply>.AsyncIterator
        let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
        let relay: SMTPRelay
        /// The reply to the last EHLO: what the relay offers.
        var hello = SMTPReply(code: 250, lines: [])

        /// The next reply, when its code is one of `expected`. A relay that closes the connection or says it will
        /// (421) ends it.
        mutating func reply(_ expected: Set<Int>, to what: String) async throws -> SMTPReply {
            guard let reply = try await replies.next() else {
                throw ConnectionEnded(failure: .temporary("\(relay.description) closed the connection (\(what))"))
            }
            if reply.code == 421 { throw ConnectionEnded(failure: SMTPFailure(reply, to: what)) }
            guard expected.contains(reply.code) else { throw SMTPFailure(reply, to: what) }
            return reply
        }

        mutating func command(_ line: String, _ expected: Set<Int>, what: String? = nil) async throws -> SMTPReply {
            try await outbound.write(ByteBuffer(string: line + "\r\n"))
            return try await reply(expected, to: what ?? String(line.prefix(while: { $0 != " " })))
        }

        /// One message: its envelope, then its bytes. Once the connection `handedOver` a message, a temporary refusal
        /// of the next `MAIL FROM` ends the connection, and the message goes on a new one.
        mutating func transaction(_ envelope: SMTPEnvelope, handedOver: Bool) async throws {
            // Raw UTF-8 in headers (a name in an address) needs SMTPUTF8; 8-bit bodies need 8BITMIME.
            var parameters = ""
            if hello.offers("8BITMIME") { parameters += " BODY=8BITMIME" }
            if hello.offers("SMTPUTF8") && !(envelope.sender + envelope.recipients.joined()).allSatisfy(\.isASCII) {
                parameters += " SMTPUTF8"
            }
            do {
                _ = try await command("MAIL FROM:<\(envelope.sender)>\(parameters)", [250], what: "MAIL FROM")
            } catch let failure as SMTPFailure where handedOver && failure.isTemporary {
                throw ConnectionEnded(failure: failure)
            }
            for recipient in envelope.recipients {
                _ = try await command("RCPT TO:<\(recipient)>", [250, 251], what: "RCPT TO")
            }
            _ = try await command("DATA", [354])
            try await outbound.write(ByteBuffer(bytes: SMTPClient.dotStuffed(envelope.message)))
            _ = try await reply([250], to: "the message")
        }
    }

    /// The message as DATA sends it: a line starting with "." gets one more (RFC 5321 4.5.2), lines end with CRLF,
    /// and a line holding a single "." ends it.
    static func dotStuffed(_ message: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(message.count + 64)
        var atLineStart = true
        var previous: UInt8 = 0
        for byte in message {
            if atLineStart && byte == UInt8(ascii: ".") { out.append(byte) }
            // A bare LF becomes CRLF: the relay may refuse a bare one.
            if byte == UInt8(ascii: "\n") && previous != UInt8(ascii: "\r") { out.append(UInt8(ascii: "\r")) }
            out.append(byte)
            atLineStart = byte == UInt8(ascii: "\n")
            previous = byte
        }
        if !atLineStart { out += Array("\r\n".utf8) }
        out += Array(".\r\n".utf8)
        return out
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}

/// A message and its envelope: who the relay is told it is from and to, and its bytes (headers and body, lines ended
/// by CRLF).
public struct SMTPEnvelope: Sendable {
    public var sender: String
    public var recipients: [String]
    public var message: [UInt8]

    public init(sender: String, recipients: [String], message: [UInt8]) {
        self.sender = sender
        self.recipients = recipients
        self.message = message
    }
}

/// Why a message was not handed over: for now (try again later) or for good.
public enum SMTPFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// A 4xx reply, a connection refused, lost or timed out, TLS that failed: the relay or the way to it.
    case temporary(String)
    /// A 5xx reply: the relay refuses this sender, recipient or message, and will again.
    case permanent(String)

    var isTemporary: Bool {
        if case .temporary = self { true } else { false }
    }

    init(_ reply: SMTPReply, to what: String) {
        let said = "\(what): \(reply.code) \(reply.text)"
        self = (500..<600).contains(reply.code) ? .permanent(said) : .temporary(said)
    }

    public var description: String {
        switch self {
        case .temporary(let why): "temporary: \(why)"
        case .permanent(let why): "permanent: \(why)"
        }
    }
}

/// One reply of the relay: its code and its lines' text ("250-PIPELINING", "250 8BITMIME" is one reply of two).
public struct SMTPReply: Sendable, Equatable {
    public var code: Int
    public var lines: [String]

    var text: String { lines.joined(separator: " / ") }

    /// Whether an EHLO reply names `keyword` (and, for AUTH, that mechanism among its words).
    func offers(_ keyword: String, _ word: String? = nil) -> Bool {
        lines.contains { line in
            let words = line.uppercased().split(separator: " ")
            guard words.first == Substring(keyword) else { return false }
            return word.map { words.dropFirst().contains(Substring($0)) } ?? true
        }
    }
}

/// Turns the relay's bytes into replies: a line is `CODE-text` while more follow and `CODE text` (or `CODE`) at the
/// end. A line longer than RFC 5321 allows (512), or one that is not a reply, ends the connection.
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply
    static let maxLine = 4096
    private var lines: [String] = []

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let end = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maxLine { throw SMTPFailure.temporary("a reply line too long") }
            return .needMoreData
        }
        let length = end - buffer.readerIndex
        var line = buffer.readString(length: length) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        if line.hasSuffix("\r") { line.removeLast() }
        let bytes = Array(line.utf8)
        guard bytes.count >= 3, let code = Int(String(decoding: bytes[0..<3], as: UTF8.self)),
            (100..<600).contains(code)
        else { throw SMTPFailure.temporary("not an SMTP reply: \(line.prefix(80))") }
        let more = bytes.count > 3 && bytes[3] == UInt8(ascii: "-")
        lines.append(bytes.count > 4 ? String(decoding: bytes[4...], as: UTF8.self) : "")
        if !more {
            context.fireChannelRead(wrapInboundOut(SMTPReply(code: code, lines: lines)))
            lines = []
        }
        return .continue
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// Closes the connection when the relay says nothing for the read timeout: the reply being waited for then ends in a
/// temporary failure rather than a wait without end.
final class CloseWhenIdle: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
