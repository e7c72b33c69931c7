import Configuration
import Foundation
import Logging
import NIOCore
import QuadCore
import QuadMail

/// Everything an operator can set, from flags, then the environment, then defaults.
public struct ServerConfiguration: Sendable {
    public var hostname = "127.0.0.1"
    public var port = 8080
    public var database = DatabaseLocation.sqlite(path: "quad.sqlite")
    public var logLevel = Logger.Level.info
    /// `QUAD_LOG_FORMAT`: `text` (a line as swift-log writes it) or `json` (`JSONLogHandler`).
    public var logJSON = false
    /// `QUAD_ADMIN_TOKEN`; when nil, the first start generates one and stores its hash.
    public var adminToken: String?
    public var loadDemoData = true
    /// Requests per second per client; 0 turns rate limiting off.
    public var rateLimit = 20.0
    public var rateBurst = 40
    /// Open event streams one client may hold at once.
    public var maxEventStreamsPerClient = 8
    public var eventHeartbeat = Duration.seconds(15)
    /// Connections open at once, in all (kept below the process's descriptor limit: `ConnectionLimits`).
    public var maxConnections = 16384
    /// Connections one address may hold open at once (a trusted proxy's count only toward the total).
    public var maxConnectionsPerClient = 256
    /// Seconds a request's head may take to arrive whole, from its first byte or from the connection opening.
    public var headTimeoutSeconds = 10
    /// Seconds a connection with no request in progress stays open.
    public var idleTimeoutSeconds = 60
    /// How many recent events a reconnecting client can resume from.
    public var eventBufferSize = 1024
    /// How often pages and clients poll when live events are unavailable, in seconds (at least 5).
    public var refreshSeconds = 30
    /// The addresses of the reverse proxies in front of Quad. A request from one of them is counted (rate limits,
    /// sign-in back-off) as from the client its `X-Forwarded-For` names; from anyone else that header is ignored.
    public var trustedProxies: Set<String> = []
    /// Whether a proxy is named: `X-Forwarded-Proto` and `X-Forwarded-Host` then give the public URL.
    public var trustProxy: Bool { !trustedProxies.isEmpty }
    /// Whether people may create their own accounts (`open`) or admins add them (`closed`).
    public var openSignup = false
    /// How many days a library loan lasts.
    public var loanDays = 14
    /// How long a freed seat or a returned book is held for the first in its waiting line.
    public var offerTerms = OfferTerms.default
    /// bcrypt's cost for password hashes (tests lower it).
    public var passwordCost: UInt8 = 12
    /// For working on the web app: read templates and static files from this folder instead of the build.
    public var webDirectory: String?
    /// The one clock every feature, store and background service reads. `SystemClock` in production; tests
    /// inject theirs, and `quad serve` in testing mode starts one at `QUAD_NOW`.
    public var clock: any QuadClock = SystemClock()
    /// Where mail goes (`QUAD_SMTP_URL`); nil: Quad sends no mail.
    public var smtpRelay: SMTPRelay?
    /// Who mail is from (`QUAD_MAIL_FROM`), needed with a relay.
    public var mailFrom: MailAddress?
    /// A PEM file of certificates to trust for the relay besides the system's (`QUAD_SMTP_CA_FILE`).
    public var smtpTrustedCertificates: String?
    /// How people reach Quad (`QUAD_PUBLIC_URL`, `https://quad.campus.example`): the links in mail. Nil: worked out
    /// per request, and no mail.
    public var publicURL: String?
    /// Sign-in with the organisation's accounts (OpenID Connect, `QUAD_OIDC_ISSUER` and the settings with it); nil:
    /// Quad's own passwords only.
    public var organisation: OrganisationSignIn?
    /// Whether people may sign in with a password kept by Quad (`QUAD_LOCAL_PASSWORDS`): turned off, only the
    /// organisation's sign-in is offered (the admin token still works, for the operator).
    public var localPasswords = true
    /// `QUAD_METRICS_FROM`: the addresses a monitoring system scrapes `/metrics` from.
    public var metricsFrom: Set<String> = []
    /// `QUAD_METRICS_TOKEN`: the bearer token that reads `/metrics` from anywhere.
    public var metricsToken: String?
    /// Rotating backups of the SQLite database (`QUAD_BACKUP_DIR` and the settings with it); nil: none.
    public var backups: BackupSettings?
    /// `QUAD_AUDIT_DAYS`: how long the audit trail keeps an entry (`/admin/audit`).
    public var auditDays = 365
    /// The transit operator's GTFS-Realtime feed (`QUAD_GTFS_RT_URL` and the settings with it); nil: none.
    public var gtfsRealtime: GTFSRealtimeSettings?
    /// `QUAD_TESTING=on`: allows the settings that only tests may use (`QUAD_NOW`), so that none of them can be
    /// switched on by accident in production.
    public var testing = false

    public init() {}

    /// Reads the environment, with command-line values (keyed by setting) taking precedence, through
    /// swift-configuration's reader; the defaults are this type's own. Each value is read as text and checked here,
    /// so a bad one stops start-up with a message naming it (the reader's typed getters would fall back to the
    /// default in silence). Throws a `ConfigurationError` naming the first setting that is not valid.
    public init(environment: [String: String], flags: [Setting: String] = [:]) throws {
        let reader = Self.reader(environment: environment, flags: flags)
        func raw(_ setting: Setting) -> (value: String, name: String)? {
            guard let value = reader.string(forKey: setting.key, isSecret: setting.isSecret) else { return nil }
            if flags[setting] != nil { return (value, setting.flag ?? setting.variable) }
            // A variable set to nothing is as good as unset.
            return value.isEmpty ? nil : (value, setting.variable)
        }
        func parse<T>(_ setting: Setting, _ expected: String, _ convert: (String) -> T?) throws -> T? {
            guard let (value, name) = raw(setting) else { return nil }
            guard let parsed = convert(value.trimmingCharacters(in: .whitespaces)) else {
                throw ConfigurationError(setting: name, message: "\"\(value)\" is not \(expected)")
            }
            return parsed
        }

        if let value = try parse(.hostname, "a host name", { $0.isEmpty ? nil : $0 }) { hostname = value }
        if let value = try parse(
            .port, "a port number (0–65535)", { Int($0).flatMap { (0...65535).contains($0) ? $0 : nil } })
        {
            port = value
        }
        if let value = try parse(
            .database, "a file path, sqlite:PATH, :memory: or a postgres:// URL", DatabaseLocation.init(parsing:))
        {
            database = value
        }
        if let value = try parse(
            .logLevel, "a log level (trace, debug, info, notice, warning, error, critical)",
            { Logger.Level(rawValue: $0.lowercased()) })
        {
            logLevel = value
        }
        if let value = try parse(.logFormat, "text or json", { ["text": "text", "json": "json"][$0.lowercased()] }) {
            logJSON = value == "json"
        }
        if let value = try parse(.adminToken, "a token of at least 16 characters", { $0.count >= 16 ? $0 : nil }) {
            adminToken = value
        }
        if let value = try parse(.demo, "on or off", Self.parseSwitch) { loadDemoData = value }
        if let value = try parse(
            .rateLimit, "a number of requests per second ≥ 0",
            { Double($0).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil } })
        {
            rateLimit = value
        }
        if let value = try parse(
            .eventHeartbeat, "a number of seconds from 1 to 300",
            { Int($0).flatMap { (1...300).contains($0) ? $0 : nil } })
        {
            eventHeartbeat = .seconds(value)
        }
        if let value = try parse(
            .refreshSeconds, "a whole number of seconds", { Int($0).flatMap { $0 > 0 ? $0 : nil } })
        {
            refreshSeconds = max(5, value)
        }
        if raw(.legacyAPI) != nil {
            // The switch let anyone change data; an operator who set it must learn what replaced it.
            throw ConfigurationError(
                setting: Setting.legacyAPI.variable,
                message:
                    "the switch is gone: give each original app a personal app link instead (see \"The original apps\" in the README)"
            )
        }
        if let value = try parse(
            .loanDays, "a whole number of days from 1 to 365", { Int($0).flatMap { (1...365).contains($0) ? $0 : nil } }
        ) {
            loanDays = value
        }
        if let value = try parse(
            .roomOfferMinutes, "a whole number of minutes from 1 to 1440",
            { Int($0).flatMap { (1...1440).contains($0) ? $0 : nil } })
        {
            offerTerms.room = TimeInterval(value * 60)
        }
        if let value = try parse(
            .bookOfferHours, "a whole number of hours from 1 to 720",
            { Int($0).flatMap { (1...720).contains($0) ? $0 : nil } })
        {
            offerTerms.book = TimeInterval(value * 3600)
        }
        if let value = try parse(
            .trustProxy, "off, or the proxies' IP addresses separated by commas", Self.parseProxies)
        {
            trustedProxies = value
        }
        if let value = try parse(.signup, "open or closed", { ["open": true, "closed": false][$0.lowercased()] }) {
            openSignup = value
        }
        if let value = try parse(
            .webDirectory, "the project's Sources folder, to read each module's Web/ from it",
            { value in
                var isFolder: ObjCBool = false
                return FileManager.default.fileExists(
                    atPath: value + "/QuadPlatform/Web/templates", isDirectory: &isFolder)
                    && isFolder.boolValue
                    ? value : nil
            })
        {
            webDirectory = value
        }
        if let value = try parse(.rateBurst, "a whole number ≥ 1", { Int($0).flatMap { $0 >= 1 ? $0 : nil } }) {
            rateBurst = value
        }
        func count(_ setting: Setting, _ range: ClosedRange<Int>, _ what: String) throws -> Int? {
            try parse(setting, "a whole number of \(what) from \(range.lowerBound) to \(range.upperBound)") {
                Int($0).flatMap { range.contains($0) ? $0 : nil }
            }
        }
        if let value = try count(.maxConnections, 16...1_000_000, "connections") { maxConnections = value }
        if let value = try count(.maxConnectionsPerClient, 1...1_000_000, "connections") {
            maxConnectionsPerClient = value
        }
        if let value = try count(.headTimeout, 1...300, "seconds") { headTimeoutSeconds = value }
        if let value = try count(.idleTimeout, 1...3600, "seconds") { idleTimeoutSeconds = value }
        if let value = try parse(.testing, "on or off", Self.parseSwitch) { testing = value }
        try readMail(raw: raw, parse: parse)
        try readOrganisation(raw: raw, parse: parse)
        try readBackups(raw: raw, parse: parse)
        try readGTFSRealtime(raw: raw, parse: parse)
        if let value = try parse(.metricsFrom, "IP addresses separated by commas", Self.parseProxies) {
            metricsFrom = value
        }
        metricsToken = try parse(.metricsToken, "a token of at least 16 characters", { $0.count >= 16 ? $0 : nil })
        if let value = try count(.auditDays, 1...36500, "days") { auditDays = value }
        if let start = try parse(
            .now, "an ISO 8601 instant such as 2026-11-24T16:30:00Z", { try? Date($0, strategy: .iso8601) })
        {
            guard testing else {
                throw ConfigurationError(
                    setting: raw(.now)?.name ?? Setting.now.variable,
                    message: "it is a testing setting, refused unless QUAD_TESTING=on")
            }
            clock = OffsetClock(start: start)
        }
    }

    /// The clock `QUAD_NOW` asks for (with `QUAD_TESTING=on`), or nil when it is unset: for the client commands,
    /// which follow a test server's time the same way.
    public static func testingClock(environment: [String: String]) throws -> (any QuadClock)? {
        guard environment[Setting.now.variable]?.isEmpty == false else { return nil }
        let names = [Setting.now.variable, Setting.testing.variable]
        return try ServerConfiguration(environment: environment.filter { names.contains($0.key) }).clock
    }

    /// The mail settings: a relay needs a sender and a public address (mail's links lead there).
    private mutating func readMail(
        raw: (Setting) -> (value: String, name: String)?,
        parse: (Setting, String, (String) -> String?) throws -> String?
    ) throws {
        if let (value, name) = raw(.smtpURL) {
            do {
                smtpRelay = try SMTPRelay(url: value)
            } catch {
                // The message never repeats the URL: it may hold a password.
                throw ConfigurationError(setting: name, message: error.description)
            }
        }
        if let value = try parse(
            .mailFrom, "an address such as Quad <quad@campus.example>",
            { value in
                Self.parseMailAddress(value).map { _ in value }
            })
        {
            mailFrom = Self.parseMailAddress(value)
        }
        smtpTrustedCertificates = try parse(.smtpCA, "a readable PEM file of certificates") { path in
            FileManager.default.isReadableFile(atPath: path) ? path : nil
        }
        publicURL = try parse(.publicURL, "an address such as https://quad.campus.example (no path)") { value in
            guard let url = URLComponents(string: value), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host?.isEmpty == false, url.path.isEmpty || url.path == "/", url.query == nil, url.user == nil
            else { return nil }
            return value.hasSuffix("/") ? String(value.dropLast()) : value
        }
        if smtpRelay != nil {
            for (setting, missing) in [(Setting.mailFrom, mailFrom == nil), (.publicURL, publicURL == nil)]
            where missing {
                throw ConfigurationError(
                    setting: setting.variable,
                    message: "it is needed with QUAD_SMTP_URL (mail says who it is from and links to Quad)")
            }
        }
    }

    /// `quad@campus.example` or `Quad <quad@campus.example>`: one address, nothing that could make it two.
    static func parseMailAddress(_ value: String) -> MailAddress? {
        var name: String?
        var address = value
        if let open = value.lastIndex(of: "<"), value.hasSuffix(">") {
            name = value[..<open].trimmingCharacters(in: .whitespaces)
            address = String(value[value.index(after: open)..<value.index(before: value.endIndex)])
        }
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !address.contains(where: { $0.isWhitespace || "<>,;\"\\".contains($0) || !$0.isASCII }),
            name.map({ !$0.contains(where: { "<>\"\r\n".contains($0) }) }) ?? true
        else { return nil }
        return MailAddress(address, name: name?.isEmpty == true ? nil : name)
    }

    /// `off`, or IP addresses (`127.0.0.1, ::1`), each written as the socket reports it.
    static func parseProxies(_ value: String) -> Set<String>? {
        if value.lowercased() == "off" { return [] }
        let addresses = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let parsed = addresses.compactMap { try? SocketAddress(ipAddress: $0, port: 0).ipAddress }
        return !parsed.isEmpty && parsed.count == addresses.count ? Set(parsed) : nil
    }

    static func parseSwitch(_ value: String) -> Bool? {
        switch value.lowercased() {
        case "on", "true", "yes", "1": true
        case "off", "false", "no", "0": false
        default: nil
        }
    }

    /// A setting, with its command-line flag where it has one and its environment variable.
    public enum Setting: String, Sendable, CaseIterable {
        case hostname, port, database, logLevel, adminToken, demo, rateLimit, rateBurst, eventHeartbeat
        case refreshSeconds, trustProxy, webDirectory, signup, loanDays, roomOfferMinutes, bookOfferHours
        case maxConnections, maxConnectionsPerClient, headTimeout, idleTimeout
        case smtpURL, mailFrom, smtpCA, publicURL
        case oidcIssuer, oidcClientId, oidcClientSecret, oidcClientSecretFile, oidcLabel, oidcAdminGroup
        case oidcGroupsClaim, oidcStudentIdClaim, oidcLinkExisting, oidcSessionHours, localPasswords
        case backupDirectory, backupEvery, backupKeep, logFormat, metricsFrom, metricsToken, auditDays
        case gtfsRealtimeURL, gtfsRealtimeEvery, gtfsRealtimeStaleAfter
        /// Gone (replaced by personal app links): setting it is refused with a message saying so.
        case legacyAPI
        /// Testing only: `QUAD_TESTING` allows `QUAD_NOW` (the instant the server's clock starts at).
        case testing, now

        public var flag: String? {
            switch self {
            case .hostname: "--hostname"
            case .port: "--port"
            case .database: "--database"
            case .logLevel: "--log-level"
            case .demo: "--no-demo"
            case .now: "--now"
            case .adminToken, .rateLimit, .rateBurst, .eventHeartbeat, .refreshSeconds, .legacyAPI, .trustProxy,
                .webDirectory, .signup, .loanDays, .roomOfferMinutes, .bookOfferHours, .testing, .maxConnections,
                .maxConnectionsPerClient, .headTimeout, .idleTimeout, .smtpURL, .mailFrom, .smtpCA, .publicURL,
                .oidcIssuer, .oidcClientId, .oidcClientSecret, .oidcClientSecretFile, .oidcLabel, .oidcAdminGroup,
                .oidcGroupsClaim, .oidcStudentIdClaim, .oidcLinkExisting, .oidcSessionHours, .localPasswords,
                .backupDirectory, .backupEvery, .backupKeep, .logFormat, .metricsFrom, .metricsToken, .auditDays,
                .gtfsRealtimeURL, .gtfsRealtimeEvery, .gtfsRealtimeStaleAfter:
                nil
            }
        }

        public var variable: String {
            switch self {
            case .hostname: "QUAD_HOSTNAME"
            case .port: "QUAD_PORT"
            case .database: "QUAD_DATABASE_URL"
            case .logLevel: "QUAD_LOG_LEVEL"
            case .adminToken: "QUAD_ADMIN_TOKEN"
            case .demo: "QUAD_DEMO"
            case .rateLimit: "QUAD_RATE_LIMIT"
            case .rateBurst: "QUAD_RATE_BURST"
            case .eventHeartbeat: "QUAD_EVENT_HEARTBEAT"
            case .refreshSeconds: "QUAD_REFRESH_SECONDS"
            case .legacyAPI: "QUAD_LEGACY_API"
            case .trustProxy: "QUAD_TRUST_PROXY"
            case .webDirectory: "QUAD_WEB_DIR"
            case .signup: "QUAD_SIGNUP"
            case .loanDays: "QUAD_LOAN_DAYS"
            case .roomOfferMinutes: "QUAD_ROOM_OFFER_MINUTES"
            case .bookOfferHours: "QUAD_BOOK_OFFER_HOURS"
            case .maxConnections: "QUAD_MAX_CONNECTIONS"
            case .maxConnectionsPerClient: "QUAD_MAX_CONNECTIONS_PER_CLIENT"
            case .headTimeout: "QUAD_HEAD_TIMEOUT"
            case .idleTimeout: "QUAD_IDLE_TIMEOUT"
            case .smtpURL: "QUAD_SMTP_URL"
            case .mailFrom: "QUAD_MAIL_FROM"
            case .smtpCA: "QUAD_SMTP_CA_FILE"
            case .publicURL: "QUAD_PUBLIC_URL"
            case .oidcIssuer: "QUAD_OIDC_ISSUER"
            case .oidcClientId: "QUAD_OIDC_CLIENT_ID"
            case .oidcClientSecret: "QUAD_OIDC_CLIENT_SECRET"
            case .oidcClientSecretFile: "QUAD_OIDC_CLIENT_SECRET_FILE"
            case .oidcLabel: "QUAD_OIDC_LABEL"
            case .oidcAdminGroup: "QUAD_OIDC_ADMIN_GROUP"
            case .oidcGroupsClaim: "QUAD_OIDC_GROUPS_CLAIM"
            case .oidcStudentIdClaim: "QUAD_OIDC_STUDENT_ID_CLAIM"
            case .oidcLinkExisting: "QUAD_OIDC_LINK_EXISTING"
            case .oidcSessionHours: "QUAD_OIDC_SESSION_HOURS"
            case .localPasswords: "QUAD_LOCAL_PASSWORDS"
            case .backupDirectory: "QUAD_BACKUP_DIR"
            case .backupEvery: "QUAD_BACKUP_EVERY"
            case .backupKeep: "QUAD_BACKUP_KEEP"
            case .logFormat: "QUAD_LOG_FORMAT"
            case .metricsFrom: "QUAD_METRICS_FROM"
            case .metricsToken: "QUAD_METRICS_TOKEN"
            case .auditDays: "QUAD_AUDIT_DAYS"
            case .gtfsRealtimeURL: "QUAD_GTFS_RT_URL"
            case .gtfsRealtimeEvery: "QUAD_GTFS_RT_EVERY"
            case .gtfsRealtimeStaleAfter: "QUAD_GTFS_RT_STALE_AFTER"
            case .testing: "QUAD_TESTING"
            case .now: "QUAD_NOW"
            }
        }
    }
}

/// A setting that cannot be used, said in one line: "Invalid QUAD_PORT: "abc" is not a port number".
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public var setting: String
    public var message: String

    public var description: String { "Invalid \(setting): \(message)." }
}

/// Where the data lives.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case sqliteMemory
    case postgres(url: String)

    /// `quad.sqlite`, `sqlite:/var/lib/quad.sqlite`, `:memory:`, `postgres://user:pw@host/db`.
    public init?(parsing value: String) {
        if value == ":memory:" || value == "sqlite::memory:" {
            self = .sqliteMemory
        } else if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") {
            guard let url = URL(string: value), url.host != nil else { return nil }
            self = .postgres(url: value)
        } else if value.hasPrefix("sqlite:") {
            let path = String(value.dropFirst("sqlite:".count)).replacingOccurrences(
                of: "//", with: "", options: .anchored)
            guard !path.isEmpty else { return nil }
            self = .sqlite(path: path)
        } else if value.contains("://") {
            return nil
        } else {
            self = .sqlite(path: value)
        }
    }

    /// For logs: never prints a password.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .sqliteMemory: return "sqlite::memory:"
        case .postgres(let url):
            if var components = URLComponents(string: url) {
                if components.password != nil { components.password = "***" }
                return components.string ?? "postgres://…"
            }
            return "postgres://…"
        }
    }
}

extension ServerConfiguration {
    /// The command line first, then the environment. The admin token and the database URL (it may hold a password)
    /// are secrets: the reader never reports their values (`CONFIG_ACCESS_LOG_FILE` would otherwise log them).
    static func reader(environment: [String: String], flags: [Setting: String]) -> ConfigReader {
        let given = flags.map { setting, value in
            (AbsoluteConfigKey(setting.key), ConfigValue(.string(value), isSecret: setting.isSecret))
        }
        return ConfigReader(providers: [
            InMemoryProvider(name: "command line", values: Dictionary(given) { first, _ in first }),
            EnvironmentVariablesProvider(
                environmentVariables: environment,
                secretsSpecifier: .specific(Set(Setting.allCases.filter(\.isSecret).map(\.variable)))),
        ])
    }
}

extension ServerConfiguration.Setting {
    /// The key the reader looks up: `QUAD_DATABASE_URL` is `quad.database.url`, which the environment provider
    /// spells back as the variable's name.
    var key: ConfigKey { ConfigKey(variable.lowercased().split(separator: "_").map(String.init)) }

    var isSecret: Bool {
        self == .adminToken || self == .database || self == .smtpURL || self == .oidcClientSecret
            || self == .metricsToken || self == .gtfsRealtimeURL
    }
}
