import QuadMail
import QuadTestSupport
import Testing

@testable import QuadPlatform
@testable import QuadServer

@Suite struct ConfigurationTests {
    @Test func defaultsServeOnLocalhostWithASQLiteFile() throws {
        let configuration = try ServerConfiguration(environment: [:])
        #expect(configuration.hostname == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.database == .sqlite(path: "quad.sqlite"))
        #expect(configuration.loadDemoData)
        #expect(configuration.rateLimit == 20 && configuration.rateBurst == 40)
    }

    @Test func environmentIsReadAndFlagsWin() throws {
        let configuration = try ServerConfiguration(
            environment: [
                "QUAD_PORT": "9000", "QUAD_HOSTNAME": "0.0.0.0", "QUAD_DATABASE_URL": "postgres://u:p@db/quad",
            ],
            flags: [.port: "9100", .demo: "off"])
        #expect(configuration.port == 9100)
        #expect(configuration.hostname == "0.0.0.0")
        #expect(configuration.database == .postgres(url: "postgres://u:p@db/quad"))
        #expect(!configuration.loadDemoData)
    }

    /// Each setting is looked up by its variable's name (through swift-configuration's environment provider);
    /// a variable set to nothing is as good as unset.
    @Test func everyVariableIsReadAndAnEmptyOneIsUnset() throws {
        let configuration = try ServerConfiguration(environment: [
            "QUAD_PORT": "", "QUAD_LOG_LEVEL": "debug", "QUAD_ADMIN_TOKEN": "0123456789abcdef", "QUAD_RATE_BURST": "7",
            "QUAD_EVENT_HEARTBEAT": "3", "QUAD_REFRESH_SECONDS": "60", "QUAD_TRUST_PROXY": "10.0.0.1, 10.0.0.2",
            "QUAD_SIGNUP": "open", "QUAD_LOAN_DAYS": "21", "QUAD_TESTING": "on",
        ])
        #expect(configuration.port == 8080)
        #expect(configuration.logLevel == .debug)
        #expect(configuration.adminToken == "0123456789abcdef")
        #expect(configuration.rateBurst == 7 && configuration.eventHeartbeat == .seconds(3))
        #expect(configuration.refreshSeconds == 60)
        #expect(configuration.trustedProxies == ["10.0.0.1", "10.0.0.2"])
        #expect(configuration.openSignup && configuration.loanDays == 21 && configuration.testing)
    }

    @Test func anInvalidValueNamesItsSetting() {
        #expect(throws: ConfigurationError(setting: "QUAD_PORT", message: "\"eighty\" is not a port number (0–65535)"))
        {
            try ServerConfiguration(environment: ["QUAD_PORT": "eighty"])
        }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: [:], flags: [.logLevel: "loud"])
        }
        let error = try? #require(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: ["QUAD_RATE_LIMIT": "-1"])
        }
        #expect(error?.description.hasPrefix("Invalid QUAD_RATE_LIMIT:") == true)
    }

    /// Mail: a relay with its sender and Quad's public address; an error that names the setting, never the
    /// password; a relay alone is refused (mail must say who it is from, and its links where Quad is).
    @Test func mailSettingsAreReadTogether() throws {
        let mail = try ServerConfiguration(environment: [
            "QUAD_SMTP_URL": "smtp://quad:p%40ss@mail.campus.example:587",
            "QUAD_MAIL_FROM": "Quad <quad@campus.example>",
            "QUAD_PUBLIC_URL": "https://quad.campus.example/",
        ])
        #expect(mail.smtpRelay?.password == "p@ss" && mail.smtpRelay?.security == .startTLS)
        #expect(mail.mailFrom == MailAddress("quad@campus.example", name: "Quad"))
        #expect(mail.publicURL == "https://quad.campus.example")
        #expect(try ServerConfiguration(environment: [:]).smtpRelay == nil)

        let bad = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: ["QUAD_SMTP_URL": "ftp://quad:hunter22@mail.campus.example"])
        }
        #expect(bad.setting == "QUAD_SMTP_URL" && !bad.description.contains("hunter22"))
        let alone = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: ["QUAD_SMTP_URL": "smtp://localhost:25"])
        }
        #expect(alone.setting == "QUAD_MAIL_FROM")
        for from in [
            "quad", "a@b@c.example", "Quad <quad@campus.example>, eve@evil.example", "quad@campus.example\r\nBcc: x",
        ] {
            #expect(throws: ConfigurationError.self, "\(from)") {
                try ServerConfiguration(environment: ["QUAD_MAIL_FROM": from])
            }
        }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: ["QUAD_PUBLIC_URL": "https://quad.campus.example/app?x=1"])
        }
    }

    @Test func theRealtimeFeedsSettingsAreReadTogetherAndItsAddressIsNeverRepeated() throws {
        let url = "https://feeds.transit.example/trip-updates?api_key=s3cret-key"
        let plain = try #require(try ServerConfiguration(environment: ["QUAD_GTFS_RT_URL": url]).gtfsRealtime)
        #expect(plain.url.absoluteString == url && plain.every == 30 && plain.staleAfter == 90)
        let set = try #require(
            try ServerConfiguration(environment: [
                "QUAD_GTFS_RT_URL": url, "QUAD_GTFS_RT_EVERY": "5", "QUAD_GTFS_RT_STALE_AFTER": "20",
            ]).gtfsRealtime)
        #expect(set.every == 5 && set.staleAfter == 20)
        #expect(try ServerConfiguration(environment: [:]).gtfsRealtime == nil)

        let bad = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: ["QUAD_GTFS_RT_URL": "ftp://feeds.example/x?api_key=s3cret-key"])
        }
        #expect(bad.setting == "QUAD_GTFS_RT_URL" && !bad.description.contains("s3cret"))
        let alone = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: ["QUAD_GTFS_RT_EVERY": "5"])
        }
        #expect(alone.setting == "QUAD_GTFS_RT_EVERY")
        // Believed for less than the time between reads, every prediction would be stale before the next.
        let stale = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration(environment: [
                "QUAD_GTFS_RT_URL": url, "QUAD_GTFS_RT_EVERY": "60", "QUAD_GTFS_RT_STALE_AFTER": "60",
            ])
        }
        #expect(stale.setting == "QUAD_GTFS_RT_STALE_AFTER")
    }

    @Test func databaseLocationsParse() {
        #expect(DatabaseLocation(parsing: "data/quad.sqlite") == .sqlite(path: "data/quad.sqlite"))
        #expect(DatabaseLocation(parsing: "sqlite:/var/lib/quad.sqlite") == .sqlite(path: "/var/lib/quad.sqlite"))
        #expect(DatabaseLocation(parsing: ":memory:") == .sqliteMemory)
        #expect(DatabaseLocation(parsing: "mysql://x/y") == nil)
        #expect(
            DatabaseLocation(parsing: "postgres://quad:secret@db:5432/quad")?.description
                == "postgres://quad:***@db:5432/quad")
    }
}
