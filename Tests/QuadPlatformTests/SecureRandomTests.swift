import Testing

@testable import QuadPlatform

/// Ids people paste into the command line (`quad leave <id>`, `quad cancel <id>`): one starting with `-` would be
/// read as an option, as a place id once was in the CLI's tests.
@Suite struct SecureRandomTests {
    @Test func anIdNeverStartsWithADash() {
        // One base64url string in 64 starts with `-`: among 4,000, some 62 would.
        let ids = (0..<4000).map { _ in SecureRandom.identifier(byteCount: 16) }
        #expect(!ids.contains { $0.hasPrefix("-") })
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.count == 22 })
    }
}
