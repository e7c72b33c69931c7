import Foundation
import QuadCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What can go wrong, in words a person can act on. `description` is one line.
public enum KitError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server cannot be reached (no network, server down, connection dropped).
    case offline(String)
    /// A write was refused because the kit is offline; nothing was sent or queued.
    case writeRefusedOffline(String)
    /// Signing in is needed (no token, or the server refused it).
    case unauthorized(String)
    /// The server answered with a problem (RFC 9457): its status, type and human detail.
    case problem(status: Int, type: String, detail: String)
    /// The server answered with something the kit did not expect.
    case unexpected(String)
    case timedOut(String)
    /// The server refused the input (422): each field at fault with its message.
    case invalid(detail: String, errors: [FieldError])

    public var description: String {
        switch self {
        case .offline(let detail): "offline: \(detail)"
        case .writeRefusedOffline(let detail): detail
        case .unauthorized(let detail): detail
        case .problem(_, _, let detail): detail
        case .unexpected(let detail): detail
        case .timedOut(let detail): "timed out \(detail)"
        case .invalid(let detail, let errors):
            errors.isEmpty ? detail : errors.map { "\($0.field): \($0.message)" }.joined(separator: "; ")
        }
    }

    /// Whether this error means the server could not be reached (so cached data should be shown).
    public var isOffline: Bool {
        if case .offline = self { return true }
        return false
    }

    /// Turns any error from the networking stack into a `KitError`.
    public static func from(_ error: any Error) -> KitError {
        if let kit = error as? KitError { return kit }
        if let wrapped = underlying(error), let kit = wrapped as? KitError { return kit }
        let root = underlying(error) ?? error
        if let url = root as? URLError {
            switch url.code {
            case .cannotConnectToHost, .cannotFindHost, .notConnectedToInternet, .networkConnectionLost,
                .timedOut, .dnsLookupFailed, .internationalRoamingOff, .dataNotAllowed, .secureConnectionFailed:
                return .offline("the server cannot be reached (\(url.localizedDescription))")
            default:
                return .offline("the request failed (\(url.localizedDescription))")
            }
        }
        let nsError = root as NSError
        if nsError.domain == NSURLErrorDomain {
            return .offline("the server cannot be reached (\(nsError.localizedDescription))")
        }
        return .unexpected(String(describing: root))
    }

    /// The error inside OpenAPIRuntime's `ClientError`, found without depending on its shape.
    static func underlying(_ error: any Error) -> (any Error)? {
        for child in Mirror(reflecting: error).children where child.label == "underlyingError" {
            if let inner = child.value as? any Error { return underlying(inner) ?? inner }
        }
        return nil
    }
}
