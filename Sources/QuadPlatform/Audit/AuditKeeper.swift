import ServiceLifecycle

/// Forgets the audit trail's entries older than `QUAD_AUDIT_DAYS`: at start, then every hour.
package struct AuditKeeper: Service {
    let trail: AuditTrail

    package init(trail: AuditTrail) { self.trail = trail }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let forgotten = try await trail.forgetOld()
                    if forgotten > 0 {
                        trail.logger.info("audit: forgot \(forgotten) entries older than \(trail.days) days")
                    }
                } catch {
                    trail.logger.error("audit: could not forget old entries: \(error)")
                }
                try? await trail.clock.sleep(for: .seconds(3600))
            }
        }
    }
}
