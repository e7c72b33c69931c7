import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What any client can hold of the server, bounded: how many connections one address may have open, how many all
/// of them may, and how long a request's head may take to arrive.
///
/// Why: a connection is a file descriptor. Idle or half-sent connections used to stay open for ever; once they
/// had taken the process's descriptors, `/health` stopped answering and the process died. The trap (SIGILL) is
/// libdispatch's: once a second, while Swift tasks wait for a worker, its manager thread opens `/proc/<tid>/stat`
/// of each worker thread, and takes a failed open (here EMFILE) for a thread that died, which it treats as fatal
/// (`_dispatch_workq_monitor_pools`, seen in a core dump of the server under `ulimit -n 512`). Nothing can be opened
/// ahead for it, so the process must never run out: the total is kept below the descriptor limit with room to
/// spare (`reserve`), each address gets a share of it, and a head that does not arrive in time closes its
/// connection. Event streams keep their long life but count like any connection.
package final class ConnectionLimits: Sendable {
    /// Descriptors kept for everything that is not a client's connection: the database's connections and files,
    /// the event loops' and the runtime's own, logs, the listener.
    package static let reserve = 128

    package let perClient: Int
    package let total: Int
    package let headTimeout: TimeAmount
    package let idleTimeout: TimeAmount
    /// The reverse proxies named by `QUAD_TRUST_PROXY`: their connections count only toward the total.
    let trustedProxies: Set<String>
    private let open = NIOLockedValueBox(Counts())

    private struct Counts {
        var total = 0
        var byAddress: [String: Int] = [:]
    }

    package enum Refusal: Equatable { case client, server }

    package init(
        perClient: Int, total: Int, headTimeout: TimeAmount, idleTimeout: TimeAmount, trustedProxies: Set<String>
    ) {
        self.perClient = perClient
        self.total = total
        self.headTimeout = headTimeout
        self.idleTimeout = idleTimeout
        self.trustedProxies = trustedProxies
    }

    /// The limits the configuration asks for, with the total kept within the descriptors this process may open
    /// (its soft limit raised to the hard one first). Returns the limits and, when the total had to be lowered,
    /// a line saying so for the log.
    package static func forProcess(_ configuration: ServerConfiguration) -> (ConnectionLimits, warning: String?) {
        let descriptors = raiseDescriptorLimit()
        var total = configuration.maxConnections
        var warning: String?
        if let descriptors, descriptors - reserve < total {
            total = max(16, descriptors - reserve)
            warning =
                "QUAD_MAX_CONNECTIONS is \(configuration.maxConnections), but this process may open \(descriptors) files "
                + "(ulimit -n): at most \(total) connections are accepted."
        }
        let limits = ConnectionLimits(
            perClient: min(configuration.maxConnectionsPerClient, total), total: total,
            headTimeout: .seconds(Int64(configuration.headTimeoutSeconds)),
            idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds)),
            trustedProxies: configuration.trustedProxies)
        return (limits, warning)
    }

    /// Raises the soft limit on open files to the hard one and returns it (nil: unlimited or unknown).
    static func raiseDescriptorLimit() -> Int? {
        var limit = rlimit()
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is the largest value: anything past a million is as good as unlimited here.
        return limit.rlim_cur > 1 << 30 ? nil : Int(limit.rlim_cur)
    }

    /// Counts a new connection from `address` (nil: not an IP peer, counted in the total only), or says why not.
    package func admit(_ address: String?) -> Refusal? {
        let counted = address.flatMap { trustedProxies.contains($0) ? nil : $0 }
        return open.withLockedValue { counts in
            if counts.total >= total { return .server }
            if let counted, counts.byAddress[counted, default: 0] >= perClient { return .client }
            counts.total += 1
            if let counted { counts.byAddress[counted, default: 0] += 1 }
            return nil
        }
    }

    /// Forgets a connection `admit` counted.
    package func release(_ address: String?) {
        let counted = address.flatMap { trustedProxies.contains($0) ? nil : $0 }
        open.withLockedValue { counts in
            counts.total -= 1
            if let counted {
                let left = counts.byAddress[counted, default: 1] - 1
                counts.byAddress[counted] = left > 0 ? left : nil
            }
        }
    }

    /// Counts a new connection (forgotten when it closes), or returns the handler that refuses it: put first in its
    /// pipeline, it answers at once (HTTP lets a server answer before the request) and closes, and reads nothing
    /// the client sends, so a client over its share learns why.
    func refusal(_ channel: any Channel) -> (any ChannelHandler & RemovableChannelHandler)? {
        let address = channel.remoteAddress?.ipAddress
        guard let refusal = admit(address) else {
            channel.closeFuture.whenComplete { _ in self.release(address) }
            return nil
        }
        return Refused(
            problem: refusal == .client
                ? Problem(
                    .tooManyRequests, type: "too-many-connections", title: "Too many connections",
                    detail: "This address has \(perClient) connections open to Quad: close one and try again.")
                : Problem(
                    .serviceUnavailable, type: "server-busy", title: "Quad is busy",
                    detail: "Quad has as many connections open as it can hold: try again shortly."))
    }

    private final class Refused: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        let problem: Problem
        init(problem: Problem) { self.problem = problem }

        func handlerAdded(context: ChannelHandlerContext) {
            let body = problem.json(instance: nil)
            let head =
                "HTTP/1.1 \(problem.status.code) \(problem.status.reasonPhrase)\r\n"
                + "Content-Type: application/problem+json\r\nContent-Length: \(body.count)\r\n"
                + "Retry-After: 5\r\nConnection: close\r\n\r\n"
            var buffer = context.channel.allocator.buffer(capacity: head.utf8.count + body.count)
            buffer.writeString(head)
            buffer.writeBytes(body)
            let channel = context.channel
            context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in channel.close(promise: nil) }
        }

        /// Nothing a refused client sends is read.
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    }
}

/// Closes a connection that keeps a slot without using it. A request's head must arrive whole within
/// `headTimeout` of its first byte (or of the connection opening); a connection with no request in progress closes
/// after `idleTimeout` of silence (a kept-alive connection between requests, or a body that stopped coming). A
/// request being answered (an event stream among them) has no deadline. A handler, `start`, on the network side of
/// the HTTP decoder, sees bytes arrive; the fast path, after the decoder, tells the clock of every request's head and
/// end and every answer's end, whoever answers (`arrived`, `answerEnded`). Why not a handler of its own after the
/// decoder, as it was: each request's parts went through it, a step of the pipeline each, measured with `perf` at
/// about 2 % of Quad's CPU on a kept answer (`rooms-304`, issue 41).
///
/// Why our own and not Hummingbird's idle timeout: that one sits behind the fast path, so it would close a
/// connection whose requests the fast path answers, and it has no deadline for a head sent a byte at a time.
///
/// The deadline is a time kept here, moved as requests come and go, and one check a connection looks at it: the check
/// is scheduled no further than the shorter timeout ahead, so a deadline set later never falls before it, and it
/// stops when there is no deadline. Why not a task scheduled for each deadline: a request moved it three times, each a
/// task scheduled and one cancelled on the event loop, measured with perf at about 4 % of Quad's CPU on a kept answer
/// (`Benchmarks/run rooms-304-bearer`).
final class ConnectionDeadlines: @unchecked Sendable {
    private let headTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    /// How far ahead a check is scheduled at most.
    private let step: TimeAmount
    private var deadline: (kind: Kind, at: NIODeadline)?
    /// The check, while one is scheduled.
    private var check: Scheduled<Void>?
    /// Requests whose head arrived and whose answer has not ended.
    private var answering = 0
    /// A request's head has arrived and its end not yet: bytes now are its body.
    private var readingBody = false
    /// When the read being handled arrived: the deadlines it moves count from then (one reading of the clock a read,
    /// not one a move; a read is handled in microseconds).
    private var readAt: NIODeadline?

    private enum Kind { case head, idle }

    init(_ limits: ConnectionLimits) {
        self.headTimeout = limits.headTimeout
        self.idleTimeout = limits.idleTimeout
        self.step = min(limits.headTimeout, limits.idleTimeout)
    }

    var start: Start { Start(clock: self) }

    private func arm(_ kind: Kind, _ context: ChannelHandlerContext) {
        let now = readAt ?? NIODeadline.now()
        deadline = (kind, now + (kind == .head ? headTimeout : idleTimeout))
        // A check already scheduled comes no later than `step` from when it was: before this deadline.
        if check == nil { scheduleCheck(on: context.eventLoop, closing: context.channel, now: now) }
    }

    private func disarm() {
        deadline = nil
    }

    /// A check at the deadline, or `step` from now when that is sooner: it closes the connection once the deadline has
    /// passed, and otherwise schedules the next while there is a deadline.
    private func scheduleCheck(on loop: any EventLoop, closing channel: any Channel, now: NIODeadline) {
        guard let deadline else {
            check = nil
            return
        }
        check = loop.scheduleTask(deadline: min(deadline.at, now + step)) { [self] in
            let now = NIODeadline.now()
            if let deadline = self.deadline, deadline.at <= now {
                check = nil
                channel.close(promise: nil)
            } else {
                scheduleCheck(on: loop, closing: channel, now: now)
            }
        }
    }

    /// The connection is gone: no more checks.
    private func stop() {
        deadline = nil
        check?.cancel()
        check = nil
    }

    /// Bytes arrived: the start of a head (its deadline runs from the first byte, never extended), or more of a
    /// body (the silence starts again).
    private func bytesArrived(_ context: ChannelHandlerContext) {
        if readingBody {
            arm(.idle, context)
        } else if deadline?.kind != .head {
            arm(.head, context)
        }
    }

    final class Start: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        let clock: ConnectionDeadlines
        init(clock: ConnectionDeadlines) { self.clock = clock }

        func handlerAdded(context: ChannelHandlerContext) { clock.arm(.head, context) }
        func handlerRemoved(context: ChannelHandlerContext) { clock.stop() }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            clock.readAt = .now()
            clock.bytesArrived(context)
            context.fireChannelRead(data)
            clock.readAt = nil
        }
    }

    /// A request's part arrived: its head (being read: the silence counts) or its end (being answered: no deadline
    /// until the answer ends, or the next head's bytes arrive). Already answered (an early refusal): the silence
    /// counts from now.
    func arrived(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head: headArrived(context: context)
        case .body: break
        case .end: endArrived(context: context)
        }
    }

    /// A request's head arrived (as `arrived`; also for a request the decoder does not read, `RequestScanner`).
    func headArrived(context: ChannelHandlerContext) {
        answering += 1
        readingBody = true
        arm(.idle, context)
    }

    /// A request's end arrived.
    func endArrived(context: ChannelHandlerContext) {
        readingBody = false
        if answering == 0 {
            arm(.idle, context)
        } else if deadline?.kind == .idle {
            disarm()
        }
    }

    /// An answer ended, whoever wrote it (the fast path tells each, its own too). With no more to answer, the silence
    /// counts from now: else a connection whose last answer was given would never be closed idle.
    func answerEnded(context: ChannelHandlerContext) {
        answering = max(0, answering - 1)
        if answering == 0, !readingBody, deadline == nil { arm(.idle, context) }
    }
}
