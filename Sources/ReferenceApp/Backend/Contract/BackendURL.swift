import VMHostHTTP

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
    ///
    /// The framework's ``HTTPURL`` reads it (no user info, a port from 1 to 65535, printable ASCII
    /// only), with one rule of its own: no query and no fragment, since the client's paths are
    /// appended to it.
    public init?(_ text: String) {
        for byte in text.utf8 where byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { return nil }
        guard let url = HTTPURL(text) else { return nil }
        scheme = url.scheme
        host = url.host
        port = url.port
        var prefix = url.pathAndQuery.utf8[...]
        while prefix.last == UInt8(ascii: "/") { prefix = prefix.dropLast() }
        pathPrefix = String(Substring(prefix))
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
