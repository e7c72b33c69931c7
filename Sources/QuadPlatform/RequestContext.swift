import Hummingbird
import NIOCore
import QuadCore

/// What every Quad request carries beyond Hummingbird's core: the client's address (for rate limits)
/// and a request id that logs and 500 problems share.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    public let requestId: String
    /// Who is calling, when they signed in (set by `AccessMiddleware`).
    public var person: Person?
    /// How `person` proved who they are (a cookie-signed change must also prove it is not cross-site).
    var signedIn = SignedIn.no
    /// The key of the personal app link the request came through (`FrontDoor` takes it off the path).
    var appLinkKey: String?
    /// The session token that signed the request in (not the admin token).
    public var sessionToken: String?

    /// Uploads are the largest bodies; JSON bodies get a tighter limit in `BodyLimitMiddleware`.
    public var maxUploadSize: Int { BodyLimit.upload }

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.requestId = source.logger[metadataKey: "hb.request.id"]?.description ?? RequestID().description
    }

    /// The client's address as a trusted proxy forwards it (set by `AccessMiddleware`).
    var forwardedClient: String?

    /// The address, without the port: the forwarded client's behind a trusted proxy.
    public var clientAddress: String {
        forwardedClient ?? remoteAddress?.ipAddress ?? "local"
    }

    /// Whom per-client limits count: the person when signed in, else the address.
    public var clientKey: String {
        ClientKey.of(person, address: clientAddress)
    }
}
