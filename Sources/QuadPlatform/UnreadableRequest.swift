import Foundation
import NIOCore
import NIOHTTP1

/// A request whose head cannot be read (a NUL or escape in a header, a header or target too long, too many
/// headers) never reaches the router: Hummingbird answers it with a bare `400` and closes the connection. This
/// handler, on the network side of the HTTP codec, gives that answer a problem document like every other 4xx.
/// It recognises it by its shape: 400 with `Content-Length: 0` and no `Content-Type` (the router's 400s are
/// all problems).
final class UnreadableRequest: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    package static let problem = Problem(
        .badRequest, type: "unreadable-request", title: "Unreadable request",
        detail: "The request's head could not be read: a header too long, too many headers, a target too long, "
            + "or a character a header cannot hold.")
    private var replacing = false

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head)
        where head.status == .badRequest && head.headers["Content-Length"] == ["0"]
            && !head.headers.contains(name: "Content-Type"):
            let body = Self.problem.json(instance: nil)
            head.headers.replaceOrAdd(name: "Content-Type", value: "application/problem+json")
            head.headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
            head.headers.replaceOrAdd(name: "Cache-Control", value: "no-store")
            for (name, value) in SecurityHeaders.all { head.headers.replaceOrAdd(name: name, value: value) }
            replacing = true
            context.write(wrapOutboundOut(.head(head)), promise: promise)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        case .end where replacing:
            replacing = false
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }
}
