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
