/// An absolute `http://` or `https://` URL, split where the client needs it: its origin (scheme,
/// host, port), to which credentials are bound, and the rest (path and query), sent as written.
///
/// ```swift
/// let api = HTTPURL("https://api.example.com:8443/v2")!
/// api.origin           // "https://api.example.com:8443"
/// api.appending("/threads/7?page=2").text   // "https://api.example.com:8443/v2/threads/7?page=2"
/// ```
///
/// Parsing is strict: no user info (a password in a URL ends up in logs), no white space or
/// control characters, a port from 1 to 65535; a fragment is dropped.
public struct HTTPURL: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lower-cased.
    public let scheme: String
    /// The host, lower-cased; an IPv6 literal keeps its brackets.
    public let host: String
    /// The port as written, or nil for the scheme's default.
    public let port: Int?
    /// The path and query, starting with `/` (`/` for none).
    public let pathAndQuery: String

    /// Parses an absolute `http` or `https` URL; nil for anything else.
    public init?(_ text: String) {
        guard let separator = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        var rest = text[separator.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@") else { return nil }
        var host = Substring(authority)
        var port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = authority[..<colon]
            let digits = authority[authority.index(after: colon)...]
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let number = Int(digits), (1...65535).contains(number)
            else { return nil }
            port = number
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" }) else { return nil }
        if host.hasPrefix("[") != host.hasSuffix("]") { return nil }
        let tail = rest[authorityEnd...]
        guard tail.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value != 0x7F }) else { return nil }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
        pathAndQuery = tail.isEmpty ? "/" : (tail.hasPrefix("/") ? String(tail) : "/" + tail)
    }

    /// The port connected to: the given one, or 80 / 443.
    public var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    /// `scheme://host[:port]`, the default port left out: what credentials are bound to.
    public var origin: String {
        "\(scheme)://\(host)" + (port.flatMap { $0 == (scheme == "https" ? 443 : 80) ? nil : ":\($0)" } ?? "")
    }

    /// The whole URL.
    public var text: String { "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "") + pathAndQuery }

    public var description: String { text }

    /// Whether `other` is of the same origin (scheme, host and port).
    public func isSameOrigin(as other: HTTPURL) -> Bool {
        scheme == other.scheme && host == other.host && effectivePort == other.effectivePort
    }

    /// This URL with `path` (starting with `/`, a query allowed) after its path (a trailing `/` of
    /// the path dropped): `https://h/api` + `/items?page=2` → `https://h/api/items?page=2`.
    public func appending(_ path: String) -> HTTPURL? {
        var prefix = pathAndQuery
        if let query = prefix.firstIndex(of: "?") { prefix = String(prefix[..<query]) }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        return HTTPURL(text: "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "") + prefix + (path.hasPrefix("/") ? path : "/" + path))
    }

    /// What a `Location` header points at, resolved against this URL: absolute, scheme-relative
    /// (`//host/x`), absolute path (`/x`) or relative path (`x`, beside this one).
    func resolving(_ location: String) -> HTTPURL? {
        if location.contains("://") { return HTTPURL(location) }
        let authority = "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
        if location.hasPrefix("//") { return HTTPURL("\(scheme):" + location) }
        if location.hasPrefix("/") { return HTTPURL(authority + location) }
        var directory = pathAndQuery
        if let query = directory.firstIndex(of: "?") { directory = String(directory[..<query]) }
        if let slash = directory.lastIndex(of: "/") { directory = String(directory[...slash]) }
        return HTTPURL(authority + directory + location)
    }

    private init?(text: String) { self.init(text) }
}

/// Percent-encoding of a query's names and values and of a path's segments (RFC 3986: everything
/// but the unreserved characters `A–Z a–z 0–9 - . _ ~` is encoded, as UTF-8).
public enum URLComponentEncoding {
    /// `text` with every byte outside the unreserved set percent-encoded.
    public static func encode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `name=value` pairs joined by `&`, each encoded: what follows the `?` of a URL.
    public static func query(_ items: [(name: String, value: String)]) -> String {
        items.map { encode($0.name) + "=" + encode($0.value) }.joined(separator: "&")
    }
}
