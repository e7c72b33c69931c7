import Foundation

/// A condition that did not come true in time.
public struct TimedOut: Error, CustomStringConvertible {
    public let what: String
    public var description: String { "timed out waiting until \(what)" }
}

/// Waits (in real time) until `condition` holds, or throws `TimedOut` after `timeout`: tests wait for what they
/// expect (an event, a line, a state), never for a fixed time.
public func eventually(
    isolation: isolated (any Actor)? = #isolation, _ what: String, timeout: Duration = .seconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let start = ContinuousClock.now
    while try await !condition() {
        if ContinuousClock.now - start > timeout { throw TimedOut(what: what) }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Waits (in real time) until `value` has stayed the same for `quiet`, and returns it; throws `TimedOut` when it still
/// changes after `timeout`. For a count that stops growing when the system under test stops doing something (a
/// server that stops reading): nothing else says that it stopped, so the wait is as long as the count keeps changing,
/// and `quiet` more. A machine too slow to change it within `quiet` ends the wait early, with a smaller value.
public func settled<Value: Equatable>(
    isolation: isolated (any Actor)? = #isolation, _ what: String, quiet: Duration = .seconds(1),
    timeout: Duration = .seconds(30), _ value: () async throws -> Value
) async throws -> Value {
    let start = ContinuousClock.now
    var last = try await value()
    var since = ContinuousClock.now
    while ContinuousClock.now - since < quiet {
        if ContinuousClock.now - start > timeout { throw TimedOut(what: what) }
        try await Task.sleep(for: .milliseconds(20))
        let now = try await value()
        if now != last {
            last = now
            since = ContinuousClock.now
        }
    }
    return last
}

/// The first element of `stream` that satisfies `matching`, or nil when none comes within `timeout` (or the stream
/// ends): for events that a test expects to be delivered.
public func first<Element: Sendable>(
    _ stream: AsyncStream<Element>, within timeout: Duration = .seconds(10),
    where matching: @escaping @Sendable (Element) -> Bool = { _ in true }
) async -> Element? {
    await collect(stream, within: timeout) { $0.contains(where: matching) }.first(where: matching)
}

/// The elements of `stream` up to the one after which `done` holds (or what came within `timeout`).
public func collect<Element: Sendable>(
    _ stream: AsyncStream<Element>, within timeout: Duration = .seconds(10),
    until done: @escaping @Sendable ([Element]) -> Bool
) async -> [Element] {
    await withTaskGroup(of: [Element]?.self) { group in
        group.addTask {
            var elements: [Element] = []
            for await element in stream {
                elements.append(element)
                if done(elements) { break }
            }
            return elements
        }
        // The deadline: a test fails on what it got rather than hanging.
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first ?? []
    }
}
