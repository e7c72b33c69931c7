import Foundation

/// Where Quad hands its mail over, as an operator writes it in `QUAD_SMTP_URL`: `smtp://user:pass@host:587` (STARTTLS,
/// required once there is a password: it is never sent in the clear), `smtps://user:pass@host:465` (TLS from the
/// first byte), or `smtp://localhost:25` (a local relay, no password; STARTTLS when it offers it, the certificate
/// unchecked: `SMTPClient`).
public struct SMTPRelay: Sendable, Equatable {
    public enum Security: String, Sendable {
        /// TLS from the first byte.
        case tls
        /// Plain, then STARTTLS: required (with credentials), or only when the relay offers it.
        case startTLS
        case startTLSWhenOffered
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?

    public init(host: String, port: Int, security: Security, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
    }

    /// Reads `QUAD_SMTP_URL`; nil with why when it does not read (the error never repeats the password).
    public init(url text: String) throws(MailSettingError) {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            let host = url.host, !host.isEmpty
        else { throw MailSettingError("QUAD_SMTP_URL is not a URL such as smtp://user:password@host:587") }
        guard url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil else {
            throw MailSettingError("QUAD_SMTP_URL names a host and a port, nothing after them")
        }
        let username = url.user.flatMap { $0.removingPercentEncoding }
        let password = url.password.flatMap { $0.removingPercentEncoding }
        if (username == nil) != (password == nil) {
            throw MailSettingError("QUAD_SMTP_URL gives a user without a password, or a password without a user")
        }
        switch scheme {
        case "smtps":
            self.init(host: host, port: url.port ?? 465, security: .tls, username: username, password: password)
        case "smtp":
            self.init(
                host: host, port: url.port ?? 587, security: password == nil ? .startTLSWhenOffered : .startTLS,
                username: username, password: password)
        default:
            throw MailSettingError("QUAD_SMTP_URL starts with smtp:// (STARTTLS) or smtps:// (TLS)")
        }
        guard (1...65535).contains(port) else { throw MailSettingError("QUAD_SMTP_URL's port is 1 to 65535") }
    }

    /// As the logs may show it: without the password.
    public var description: String {
        "\(security == .tls ? "smtps" : "smtp")://\(username.map { "\($0)@" } ?? "")\(host):\(port)"
    }
}

/// A mail setting that does not read, said as the operator must fix it.
public struct MailSettingError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
