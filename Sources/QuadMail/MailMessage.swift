import Foundation

/// A name and an address, as a header shows them: `Ada Lovelace <ada@example.org>`.
public struct MailAddress: Sendable, Hashable {
    public var name: String?
    public var address: String

    public init(_ address: String, name: String? = nil) {
        self.address = address
        self.name = name
    }
}

/// One message as Quad sends it: plain text always, HTML beside it, and a calendar invitation (iMIP) when it carries
/// one, rendered as RFC 5322 with MIME (UTF-8 everywhere: headers as RFC 2047 encoded words, bodies as
/// quoted-printable, the calendar as base64).
public struct MailMessage: Sendable, Equatable {
    /// An iCalendar object and the iTIP method it is sent with (`REQUEST`, `CANCEL`).
    public struct Invitation: Sendable, Equatable {
        public var method: String
        public var ics: String

        public init(method: String, ics: String) {
            self.method = method
            self.ics = ics
        }
    }

    public var from: MailAddress
    public var to: MailAddress
    public var subject: String
    public var text: String
    public var html: String?
    public var invitation: Invitation?
    /// Stays the same for every try, so a message sent twice is known as one (`<id@host>`).
    public var messageID: String
    public var date: Date
    /// Where one click turns this kind of mail off (RFC 8058: also `List-Unsubscribe-Post`).
    public var unsubscribe: String?

    public init(
        from: MailAddress, to: MailAddress, subject: String, text: String, html: String? = nil,
        invitation: Invitation? = nil, messageID: String, date: Date, unsubscribe: String? = nil
    ) {
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.invitation = invitation
        self.messageID = messageID
        self.date = date
        self.unsubscribe = unsubscribe
    }

    /// The message's bytes, lines ended by CRLF, ready for DATA.
    public func rendered() -> [UInt8] {
        var head: [(String, String)] = [
            ("Date", Self.date(date)),
            ("From", Self.header(from)),
            ("To", Self.header(to)),
            ("Subject", Self.encodedWords(subject)),
            ("Message-ID", messageID),
            ("MIME-Version", "1.0"),
            ("Auto-Submitted", "auto-generated"),
        ]
        if let unsubscribe {
            head.append(("List-Unsubscribe", "<\(unsubscribe)>"))
            head.append(("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"))
        }
        var parts: [(type: String, encoding: String, body: String)] = [
            ("text/plain; charset=utf-8", "quoted-printable", Self.quotedPrintable(text))
        ]
        if let html { parts.append(("text/html; charset=utf-8", "quoted-printable", Self.quotedPrintable(html))) }
        if let invitation {
            parts.append(
                (
                    "text/calendar; charset=utf-8; method=\(invitation.method)", "base64",
                    Self.base64Lines(Data(invitation.ics.utf8))
                ))
        }
        var lines = head.map { "\($0): \($1)" }
        if parts.count == 1 {
            lines += ["Content-Type: \(parts[0].type)", "Content-Transfer-Encoding: \(parts[0].encoding)", ""]
            lines.append(parts[0].body)
        } else {
            // The boundary is made from the message's id: never in a body (quoted-printable and base64 have no "_=").
            let boundary = "=_quad_" + String(messageID.filter { $0.isLetter || $0.isNumber }.prefix(40))
            lines += ["Content-Type: multipart/alternative; boundary=\"\(boundary)\"", ""]
            for part in parts {
                lines += [
                    "--\(boundary)", "Content-Type: \(part.type)", "Content-Transfer-Encoding: \(part.encoding)", "",
                    part.body,
                ]
            }
            lines.append("--\(boundary)--")
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    // MARK: Encodings

    /// `Ada Lovelace <ada@example.org>`, the name as encoded words when it needs them.
    static func header(_ address: MailAddress) -> String {
        guard let name = address.name, !name.isEmpty else { return address.address }
        let plain = name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == " ") }
        return "\(plain ? name : encodedWords(name)) <\(address.address)>"
    }

    /// RFC 2047: text as it is when it is plain ASCII, else `=?UTF-8?B?…?=` words of at most 75 characters, split
    /// between characters (never inside one).
    static func encodedWords(_ text: String) -> String {
        if text.allSatisfy({ $0.isASCII && !$0.isNewline }) && text.count <= 900 { return text }
        var words: [String] = []
        var chunk = Data()
        for character in text where !character.isNewline {
            let bytes = Data(String(character).utf8)
            // 45 bytes make 60 base64 characters; with "=?UTF-8?B?" and "?=", 72.
            if chunk.count + bytes.count > 45 {
                words.append("=?UTF-8?B?\(chunk.base64EncodedString())?=")
                chunk = Data()
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?\(chunk.base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }

    /// RFC 2045 quoted-printable: lines of at most 76 characters, CRLF line ends, `=` and bytes outside printable
    /// ASCII as `=XX`, a space or tab before a line end encoded. Worked on bytes: every message's HTML goes through
    /// here in the transaction of the change it tells of (String searches made it a tenth of a booking's cost).
    static func quotedPrintable(_ text: String) -> String {
        let input = Array(text.utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(input.count + input.count / 8 + 16)
        /// Whether a line ends at `index`: LF, or CR LF.
        func lineEnd(_ index: Int) -> Bool {
            index < input.count
                && (input[index] == 0x0A || input[index] == 0x0D && index + 1 < input.count && input[index + 1] == 0x0A)
        }
        var width = 0
        var index = 0
        while index < input.count {
            if lineEnd(index) {
                index += input[index] == 0x0D ? 2 : 1
                out += [0x0D, 0x0A]
                width = 0
                continue
            }
            let byte = input[index]
            let last = index + 1 == input.count || lineEnd(index + 1)
            let encoded =
                (byte == 0x20 || byte == 0x09) && last || byte == UInt8(ascii: "=") || byte < 0x20 && byte != 0x09
                || byte > 0x7E
            let size = encoded ? 3 : 1
            if width + size > 75 {
                out += [UInt8(ascii: "="), 0x0D, 0x0A]
                width = 0
            }
            if encoded {
                out += [UInt8(ascii: "="), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            } else {
                out.append(byte)
            }
            width += size
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Base64 in lines of 76 characters.
    static func base64Lines(_ data: Data) -> String {
        data.base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
    }

    /// RFC 5322's date: `Fri, 27 Nov 2026 09:30:00 +0000`, in UTC.
    static func date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ number: Int?) -> String { String(format: "%02d", number ?? 0) }
        return "\(days[parts.weekday! - 1]), \(two(parts.day)) \(months[parts.month! - 1]) \(parts.year!) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) +0000"
    }
}
