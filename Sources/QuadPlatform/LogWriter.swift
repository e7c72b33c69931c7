import Foundation
import NIOConcurrencyHelpers
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes Quad's log lines on a thread of its own, so that no request waits for the terminal, the pipe or the journal:
/// a line is formatted where it is logged and added to a buffer, and the writer takes all that waits at once and
/// writes it in one call, every `interval` (20 ms), or at once when 64 KiB wait, a warning is logged, or someone
/// flushes. Why: measured with `Benchmarks/run` (issue 41), a write per line under the stream's lock (swift-log's
/// `StreamLogHandler`) cost Quad about 40 % of its throughput at the default level; waking the writer for every line
/// cost as much again (a thread switch per request, seen with `perf`).
///
/// Bounded: when the output does not keep up (a pipe nobody reads), lines past `capacity` bytes waiting are dropped
/// rather than holding requests or memory. Each is counted (`dropped`, `quad_log_lines_dropped` in `/metrics`) and the log
/// says how many once it is written again. Lines still waiting when the process is killed are lost; `flush()` waits for
/// them (the server calls it as it stops).
package final class LogWriter: @unchecked Sendable {
    /// Text lines (`QUAD_LOG_FORMAT=text`, as swift-log writes them) go to standard error, JSON lines to standard
    /// output, as before.
    package static let standardError = LogWriter(fileDescriptor: 2)
    package static let standardOutput = LogWriter(fileDescriptor: 1)

    /// The most bytes waiting to be written: past it, lines are dropped (and counted).
    let capacity: Int
    private let fileDescriptor: Int32
    /// How long a line waits at most before it is written.
    let interval: Double = 0.02
    /// Bytes waiting that are written at once.
    let batch = 64 << 10
    /// 0: nothing waits and nothing is being written; 1: write now; 2: lines wait, or are being written.
    private let condition = ConditionLock(value: 0)
    /// The condition's value, as last set here (its own getter takes the lock again).
    private var state = 0
    // Guarded by `condition`.
    /// The lines waiting, and the buffer last written (emptied, its room kept): the writer swaps them, so that a busy
    /// log grows no new buffer every `interval`.
    private var waiting = ByteBuffer()
    private var written = ByteBuffer()
    private var droppedSinceWritten = 0
    private var droppedTotal = 0
    private var started = false
    /// The line that says how many lines were dropped, in the format of the lines written.
    private var dropNotice: @Sendable (Int) -> [UInt8] = { count in
        Array("Quad dropped \(count) log lines: the log was not read fast enough.\n".utf8)
    }

    init(fileDescriptor: Int32, capacity: Int = 8 << 20) {
        self.fileDescriptor = fileDescriptor
        self.capacity = capacity
    }

    /// Lines dropped since the process started.
    package var dropped: Int {
        condition.lock()
        defer { condition.unlock() }
        return droppedTotal
    }

    /// How to say that lines were dropped, in the format of the lines written (a JSON object for JSON lines).
    package func sayDrops(_ notice: @escaping @Sendable (Int) -> [UInt8]) {
        condition.lock()
        dropNotice = notice
        condition.unlock()
    }

    /// Adds a whole line (ending with a line feed) to what the writer writes next; at once when `urgent`.
    package func append(_ line: some Collection<UInt8>, urgent: Bool = false) {
        append(most: line.count, urgent: urgent) { buffer in
            UnsafeMutableRawBufferPointer(rebasing: buffer[..<line.count]).copyBytes(from: line)
            return line.count
        }
    }

    /// Adds a whole line that `fill` puts together where it waits to be written, under the lock (a request's line:
    /// no buffer of its own, no copy): `fill` writes at most `most` bytes at the start of the room it is given and
    /// returns how many. Not called when the line is dropped.
    package func append(most: Int, urgent: Bool = false, _ fill: (UnsafeMutableRawBufferPointer) -> Int) {
        condition.lock()
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "quad-log-writer"
            thread.start()
        }
        if waiting.readableBytes + most > capacity {
            droppedSinceWritten += 1
            droppedTotal += 1
        } else {
            waiting.writeWithUnsafeMutableBytes(minimumWritableBytes: most) { fill($0) }
        }
        unlock(urgent || waiting.readableBytes >= batch ? 1 : state == 0 ? 2 : state)
    }

    /// Unlocks, setting the condition's value when it changes (which wakes whoever waits on it: the writer, a flush).
    private func unlock(_ value: Int) {
        if value == state {
            condition.unlock()
        } else {
            state = value
            condition.unlock(withValue: value)
        }
    }

    /// Waits until every line added so far is written, or `seconds` passed (an output nobody reads must not keep
    /// the process from ending).
    package func flush(seconds: Double = 5) {
        condition.lock()
        let idle = !started
        condition.unlock()
        if idle { return }
        condition.lock()
        unlock(state == 0 ? 0 : 1)
        if condition.lock(whenValue: 0, timeoutSeconds: seconds) { condition.unlock() }
    }

    private func run() {
        while true {
            if !condition.lock(whenValue: 1, timeoutSeconds: interval) { condition.lock() }
            guard waiting.readableBytes > 0 || droppedSinceWritten > 0 else {
                unlock(0)
                continue
            }
            // The lines go out; the buffer written last (its room kept) takes them in meanwhile.
            var lines = ByteBuffer()
            swap(&lines, &written)
            swap(&lines, &waiting)
            let notice = droppedSinceWritten > 0 ? dropNotice(droppedSinceWritten) : []
            droppedSinceWritten = 0
            unlock(2)
            write(notice)
            lines.withUnsafeReadableBytes { write($0) }
            lines.clear()
            condition.lock()
            // Kept for the next lines unless a backlog made it large (up to `capacity`).
            if lines.capacity <= 4 * batch { written = lines }
            unlock(waiting.readableBytes >= batch ? 1 : waiting.readableBytes == 0 && droppedSinceWritten == 0 ? 0 : 2)
        }
    }

    /// Writes all of `bytes`, however many calls it takes; gives up on an output that refuses them (closed).
    private func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    private func write(_ buffer: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
