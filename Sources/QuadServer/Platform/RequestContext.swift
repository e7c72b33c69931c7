import Hummingbird
import NIOCore

/// What every Quad request carries beyond Hummingbird's core: the client's address (for rate limits)
/// and a request id that logs and 500 problems share.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    public let requestId: String

    /// Uploads are the largest bodies; JSON bodies get a tighter limit in `BodyLimitMiddleware`.
    public var maxUploadSize: Int { BodyLimit.upload }

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.requestId = source.logger[metadataKey: "hb.request.id"]?.description ?? RequestID().description
    }

    /// The address used for per-client limits: the IP, without the port.
    public var clientKey: String {
        remoteAddress?.ipAddress ?? "local"
    }
}
