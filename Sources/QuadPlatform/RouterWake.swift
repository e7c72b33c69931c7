import NIOCore
import NIOHTTP1

/// Says when a connection first needs the router: the first request part that `FastPath` passes on, or the end of the
/// connection (closed, half-closed by the client, or failed), which Hummingbird's loop then ends. Until then the
/// connection's task (`QuadHTTP1Channel.handle`) waits on `needed` without entering Hummingbird's request loop.
///
/// Why: that loop's frames (the loop, its cancellation handler, the channel's reader and writer) take about 4 kB of
/// task memory per connection, kept for its life; an event stream (`PipelineEventStream`) and a connection whose
/// requests are all answered by `FastPath` never use them. Measured with `Benchmarks/run streams-10k` (heaptrack,
/// 3,000 streams): 4.1 kB of the 13.2 kB each stream held.
final class RouterWake: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let promise: EventLoopPromise<Void>
    private var woken = false

    var needed: EventLoopFuture<Void> { promise.futureResult }

    init(on loop: any EventLoop) {
        promise = loop.makePromise()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        wake()
        context.fireChannelRead(data)
        // Every later part goes straight on.
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// The client half-closed, or reading failed: Hummingbird's loop ends the connection (`NIOAsyncChannel` hands it
    /// the end of its input, or the error).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent { wake() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        wake()
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        wake()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        wake()
    }

    private func wake() {
        guard !woken else { return }
        woken = true
        promise.succeed()
    }
}
