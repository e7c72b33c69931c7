import QuadPlatform
import QuadServer
import ServiceLifecycle

/// Two Quads on one PostgreSQL database, with their event hubs listening: what one instance changes, the other
/// must hear at once (sessions, kept answers).
package enum TwoInstances {
    package static func run(
        loadDemoData: Bool = false, _ body: (_ first: Features, _ second: Features) async throws -> Void
    ) async throws {
        try await TestDatabase.withLocation(.postgres) { location in
            var configuration = TestApp.configuration(location)
            configuration.loadDemoData = loadDemoData
            let firstDatabase = try await Database.open(location, logger: TestDatabase.logger)
            let secondDatabase = try await Database.open(location, logger: TestDatabase.logger)
            let first = try await Features.start(configuration, database: firstDatabase, logger: TestDatabase.logger) {
                _ in
            }
            let second = try await Features.start(configuration, database: secondDatabase, logger: TestDatabase.logger)
            { _ in }
            let group = ServiceGroup(
                configuration: .init(
                    services: [first.platform.events, second.platform.events], gracefulShutdownSignals: [],
                    logger: TestDatabase.logger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                do {
                    try await eventually("both instances listen") {
                        first.platform.events.isListening && second.platform.events.isListening
                    }
                    try await body(first, second)
                } catch {
                    await group.triggerGracefulShutdown()
                    throw error
                }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            await firstDatabase.close()
            await secondDatabase.close()
        }
    }
}
