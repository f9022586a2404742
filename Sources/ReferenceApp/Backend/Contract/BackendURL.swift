/// The base URL of an HTTP backend: `http://` or `https://`, a host, an optional port and an
/// optional path prefix (`http://host:8080/api`), without query or fragment.
///
/// Its origin (scheme, host, port) is the only one the HTTP client talks to (`protocol/backend.md`,
/// "Redirects").
public struct BackendURL: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lower-cased.
    public let scheme: String
    /// The host as written (lower-cased); an IPv6 literal keeps its brackets.
    public let host: String
    /// The port as written, or nil for the scheme's default.
    public let port: Int?
    /// The path prefix, percent-encoded, without a trailing `/` (empty for none).
    public let pathPrefix: String

    /// Parses an absolute `http://` or `https://` URL with a host; nil for anything else.
    public init?(_ text: String) {
        guard let separator = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        var rest = text[separator.upperBound...]
        if rest.contains("#") || rest.contains("?") { return nil }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        rest = rest[authorityEnd...]
        // No user info: a token or password in the URL would end up in logs.
        guard !authority.contains("@") else { return nil }
        var host = Substring(authority)
        var port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = authority[..<colon]
            let digits = authority[authority.index(after: colon)...]
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(digits),
                (1...65535).contains(number)
            else { return nil }
            port = number
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        if host.hasPrefix("[") != host.hasSuffix("]") { return nil }
        guard rest.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        var prefix = String(rest)
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
        self.pathPrefix = prefix
    }

    /// The port connected to: the given one, or 80 / 443.
    public var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    /// `scheme://host[:port]`.
    public var origin: String { "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "") }

    /// The URL of `path` (percent-encoded, starting with `/`) with `query` (not encoded) appended.
    package func url(path: String, query: [APIRequest.QueryItem] = []) -> String {
        var url = origin + pathPrefix + path
        for (index, item) in query.enumerated() {
            url += index == 0 ? "?" : "&"
            url += PercentEncoding.encode(item.name, as: .queryComponent) + "="
                + PercentEncoding.encode(item.value, as: .queryComponent)
        }
        return url
    }

    public var description: String { origin + pathPrefix }
}
