import Foundation

extension Data {
    /// Base64url without padding (RFC 4648 §5): random tokens, PKCE's verifiers and challenges (RFC 7636).
    public var base64URLEncoded: String {
        String(
            base64EncodedString().compactMap { character -> Character? in
                switch character {
                case "+": "-"
                case "/": "_"
                case "=": nil
                default: character
                }
            })
    }
}
