import Hummingbird

extension Request {
    /// How the client reached Quad, `http://host:port`, for absolute URLs in responses. Proxy headers count
    /// only when the operator said a proxy is trusted.
    package func baseURL(trustProxy: Bool) -> String {
        BaseURL.make(
            forwardedProto: trustProxy ? headers[.init("X-Forwarded-Proto")!] : nil,
            forwardedHost: trustProxy ? headers[.init("X-Forwarded-Host")!] : nil, host: head.authority)
    }
}

enum BaseURL {
    /// `scheme://host` from the request's (trusted) headers; a host that is not a plain name is not echoed.
    package static func make(forwardedProto: String?, forwardedHost: String?, host: String?) -> String {
        let scheme =
            forwardedProto?.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "http"
        let host = forwardedHost ?? host ?? "localhost"
        guard scheme == "http" || scheme == "https",
            host.allSatisfy({ $0.isLetter || $0.isNumber || ".-:[]_".contains($0) })
        else { return "http://localhost" }
        return "\(scheme)://\(host)"
    }
}
