import Foundation
import Testing

@testable import QuadPlatform

#if canImport(Glibc)
    import Glibc
#endif

/// Log lines are written off the request's path (`LogWriter`): whole and in order, every one of them while the output
/// keeps up; when it does not, the lines past the buffer are dropped, counted, and said once it is read again.
@Suite struct LogWriterTests {
    /// A pipe: what the writer writes, read here (or not, to block it).
    final class Pipe: @unchecked Sendable {
        let read: Int32
        let write: Int32
        init() throws {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
            (read, write) = (ends[0], ends[1])
        }
        deinit {
            close(read)
            close(write)
        }
        /// Everything waiting in the pipe now.
        func drain() -> String {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            let flags = fcntl(read, F_GETFL)
            _ = fcntl(read, F_SETFL, flags | O_NONBLOCK)
            while true {
                let count = Glibc.read(read, &buffer, buffer.count)
                guard count > 0 else { break }
                bytes += buffer[0..<count]
            }
            _ = fcntl(read, F_SETFL, flags)
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    @Test func everyLineIsWrittenWholeAndInOrder() throws {
        let pipe = try Pipe()
        let writer = LogWriter(fileDescriptor: pipe.write, capacity: 1 << 20)
        // Three times: the buffer written last takes the next lines in.
        for round in 0..<3 {
            let lines = (0..<500).map { "line \(round).\($0) " + String(repeating: "x", count: $0 % 50) + "\n" }
            for line in lines { writer.append(line.utf8) }
            writer.flush()
            #expect(pipe.drain() == lines.joined())
        }
        #expect(writer.dropped == 0)
    }

    @Test func linesPastTheBufferAreDroppedCountedAndSaid() throws {
        let pipe = try Pipe()
        let writer = LogWriter(fileDescriptor: pipe.write, capacity: 4096)
        writer.sayDrops { Array("dropped \($0)\n".utf8) }
        // Nobody reads: the pipe is full (lines written to it until it takes no more), then the writer's buffer
        // fills, then lines are dropped; appending never waits.
        let line = String(repeating: "y", count: 99) + "\n"
        let flags = fcntl(pipe.write, F_GETFL)
        _ = fcntl(pipe.write, F_SETFL, flags | O_NONBLOCK)
        var filled = 0
        while Glibc.write(pipe.write, line, line.utf8.count) == line.utf8.count { filled += 1 }
        #expect(filled > 0 && errno == EAGAIN)
        _ = fcntl(pipe.write, F_SETFL, flags)
        let started = ContinuousClock.now
        for _ in 0..<2000 { writer.append(line.utf8) }
        #expect(ContinuousClock.now - started < .seconds(5))
        let dropped = writer.dropped
        #expect(dropped > 0 && dropped < 2000)
        // Stopping waits a while for an output nobody reads, not for ever.
        let flushing = ContinuousClock.now
        writer.flush(seconds: 0.2)
        #expect(ContinuousClock.now - flushing >= .seconds(0.2) && ContinuousClock.now - flushing < .seconds(3))
        // Read again: what was kept arrives whole, then the count of what was not.
        var read = ""
        let deadline = ContinuousClock.now + .seconds(10)
        while !read.contains("dropped"), ContinuousClock.now < deadline { read += pipe.drain() }
        writer.flush()
        read += pipe.drain()
        let said = try #require(read.split(separator: "\n").first { $0.hasPrefix("dropped ") })
        #expect(Int(said.dropFirst("dropped ".count)) == dropped)
        #expect(read.split(separator: "\n").allSatisfy { $0 == line.dropLast() || $0.hasPrefix("dropped ") })
    }
}
