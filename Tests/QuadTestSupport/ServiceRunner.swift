import Logging
import ServiceLifecycle

/// Runs services (the event hub's LISTEN loop) around a test body, then shuts them down.
package struct ServiceRunner {
    package let services: [any Service]

    package init(_ services: any Service...) {
        self.services = services
    }

    package func run(_ body: () async throws -> Void) async throws {
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [], logger: TestDatabase.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                try await body()
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
