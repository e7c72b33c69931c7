// nio-floor: what SwiftNIO alone costs an answer, the floor under Quad's fast path (`Benchmarks/floor` runs it).
//
// Every request on a connection is answered with the same bytes, given on the command line as a file (Quad's own 304,
// recorded by `Benchmarks/floor`), written as they are, past any encoder, as `FastPath` writes a kept answer. Two ways
// to find the requests:
//   decoder  NIO's HTTP/1 decoder (llhttp), as Quad reads them: an answer at each request's end
//   bytes    no decoder: an answer at each blank line ("\r\n\r\n") read; a bodiless GET is all a load sends
// Nothing is logged, counted, checked or looked up: no server that reads HTTP with NIO can do less for an answer.
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Answers each request's end with the bytes.
final class DecodedAnswer: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    let answer: ByteBuffer
    init(_ answer: ByteBuffer) { self.answer = answer }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) { context.writeAndFlush(NIOAny(answer), promise: nil) }
    }
}

/// Answers each blank line read with the bytes (a request may arrive in two reads: the tail it ended on is kept).
final class ByteAnswer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let answer: ByteBuffer
    var tail: [UInt8] = []
    init(_ answer: ByteBuffer) { self.answer = answer }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = tail + unwrapInboundIn(data).readableBytesView
        var answers = 0
        var last = 0
        var index = 3
        while index < bytes.count {
            if bytes[index] == 10, bytes[index - 1] == 13, bytes[index - 2] == 10, bytes[index - 3] == 13 {
                answers += 1
                last = index + 1
                index += 4
            } else {
                index += 1
            }
        }
        tail = Array(bytes[last...].suffix(3))
        for _ in 0..<answers { context.write(NIOAny(answer), promise: nil) }
        if answers > 0 { context.flush() }
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, ["decoder", "bytes"].contains(arguments[1]), let port = Int(arguments[2]),
    let bytes = FileManager.default.contents(atPath: arguments[3])
else {
    FileHandle.standardError.write(Data("usage: nio-floor decoder|bytes PORT ANSWER_FILE\n".utf8))
    exit(64)
}
let answer = ByteBuffer(bytes: bytes)
let decode = arguments[1] == "decoder"
let server = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
    .serverChannelOption(.backlog, value: 256)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            if decode {
                try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                try pipeline.addHandler(DecodedAnswer(answer))
            } else {
                try pipeline.addHandler(ByteAnswer(answer))
            }
        }
    }
    .bind(host: "127.0.0.1", port: port).wait()
print("nio-floor (\(arguments[1])) on 127.0.0.1:\(port), \(System.coreCount) event loops")
try server.closeFuture.wait()
