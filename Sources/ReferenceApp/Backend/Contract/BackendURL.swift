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
    /// Read as UTF-8 bytes: every part that is kept must be ASCII, so no character needs to be
    /// formed (`--backend` is parsed at start-up).
    public init?(_ text: String) {
        var text = text
        guard let parts = text.withUTF8({ Self.split($0) }) else { return nil }
        (scheme, host, port, pathPrefix) = parts
    }

    /// The parts of `bytes`, lower-cased where they must be; nil where ``init(_:)`` refuses.
    private static func split(
        _ bytes: UnsafeBufferPointer<UInt8>
    ) -> (scheme: String, host: String, port: Int?, pathPrefix: String)? {
        let colon = UInt8(ascii: ":"), slash = UInt8(ascii: "/")
        // The scheme, before the first "://".
        var separator = 0
        while separator + 2 < bytes.count,
              !(bytes[separator] == colon && bytes[separator + 1] == slash && bytes[separator + 2] == slash) {
            separator += 1
        }
        guard separator + 2 < bytes.count else { return nil }
        let scheme: String
        if separator == 4, lowercasedEquals(bytes, 4, "http") {
            scheme = "http"
        } else if separator == 5, lowercasedEquals(bytes, 5, "https") {
            scheme = "https"
        } else {
            return nil
        }
        // No query, no fragment; the authority ends at the first "/".
        let restStart = separator + 3
        var firstSlash: Int?
        for index in restStart..<bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "#"), UInt8(ascii: "?"): return nil
            case slash: firstSlash = firstSlash ?? index
            default: break
            }
        }
        let authorityEnd = firstSlash ?? bytes.count
        var lastColon: Int?
        for index in restStart..<authorityEnd {
            switch bytes[index] {
            case UInt8(ascii: "@"): return nil  // user info: a token or password in the URL would end up in logs
            case colon: lastColon = index
            case UInt8(ascii: "]"): lastColon = nil  // a colon inside an IPv6 literal
            default: break
            }
        }
        var hostEnd = authorityEnd
        var port: Int?
        if let lastColon {
            hostEnd = lastColon
            let digits = lastColon + 1..<authorityEnd
            guard !digits.isEmpty, digits.count <= 5 else { return nil }
            var number = 0
            for index in digits {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                number = number * 10 + Int(byte - UInt8(ascii: "0"))
            }
            guard (1...65535).contains(number) else { return nil }
            port = number
        }
        // The host and the path: ASCII without white space; brackets around an IPv6 literal or none.
        guard hostEnd > restStart else { return nil }
        for index in restStart..<bytes.count where index < hostEnd || index >= authorityEnd {
            guard isASCIIOtherThanWhiteSpace(bytes[index]) else { return nil }
        }
        if (bytes[restStart] == UInt8(ascii: "[")) != (bytes[hostEnd - 1] == UInt8(ascii: "]")) { return nil }
        let host = String(unsafeUninitializedCapacity: hostEnd - restStart) { buffer in
            for index in restStart..<hostEnd {
                buffer[index - restStart] = lowercased(bytes[index])
            }
            return hostEnd - restStart
        }
        var prefixEnd = bytes.count
        while prefixEnd > authorityEnd, bytes[prefixEnd - 1] == slash { prefixEnd -= 1 }
        let pathPrefix = String(decoding: UnsafeBufferPointer(rebasing: bytes[authorityEnd..<prefixEnd]), as: UTF8.self)
        return (scheme, host, port, pathPrefix)
    }

    private static func isASCIIOtherThanWhiteSpace(_ byte: UInt8) -> Bool {
        byte < 0x80 && byte != 0x20 && !(0x09...0x0D).contains(byte)
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// Whether the first `count` of `bytes`, ASCII upper case read as lower, are `lower` (lower-case
    /// ASCII). A plain loop: a generic one over a slice's indices instantiated type metadata (130k
    /// instructions at start-up).
    private static func lowercasedEquals(_ bytes: UnsafeBufferPointer<UInt8>, _ count: Int, _ lower: StaticString) -> Bool {
        guard count == lower.utf8CodeUnitCount, count <= bytes.count else { return false }
        var index = 0
        while index < count {
            guard lowercased(bytes[index]) == lower.utf8Start[index] else { return false }
            index += 1
        }
        return true
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
