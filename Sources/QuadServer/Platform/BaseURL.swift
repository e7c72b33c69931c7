import HTTPTypes
import Hummingbird

extension Request {
    /// How the client reached Quad, `http://host:port`, for absolute URLs in responses.
    func baseURL(trustProxy: Bool) -> String {
        head.baseURL(trustProxy: trustProxy)
    }
}

extension HTTPRequest {
    /// How the client reached Quad, `http://host:port`. Proxy headers count only when the operator said a
    /// proxy is trusted.
    func baseURL(trustProxy: Bool) -> String {
        let forwardedProto = trustProxy ? headerFields[.init("X-Forwarded-Proto")!] : nil
        let forwardedHost = trustProxy ? headerFields[.init("X-Forwarded-Host")!] : nil
        let scheme =
            forwardedProto?.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "http"
        let host = forwardedHost ?? authority ?? "localhost"
        guard scheme == "http" || scheme == "https",
            host.allSatisfy({ $0.isLetter || $0.isNumber || ".-:[]_".contains($0) })
        else { return "http://localhost" }
        return "\(scheme)://\(host)"
    }
}
