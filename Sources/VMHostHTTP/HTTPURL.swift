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
    ///
    /// Read as UTF-8 bytes: every part that is kept must be ASCII, so no character needs to be
    /// formed (a client is made at start-up, where this runs once per client).
    public init?(_ text: String) {
        var text = text
        guard let parts = text.withUTF8({ Self.split($0) }) else { return nil }
        (scheme, host, port, pathAndQuery) = parts
    }

    /// The parts of `bytes`, lower-cased where they must be; nil where ``init(_:)`` refuses.
    private static func split(
        _ bytes: UnsafeBufferPointer<UInt8>
    ) -> (scheme: String, host: String, port: Int?, pathAndQuery: String)? {
        let colon = UInt8(ascii: ":"), slash = UInt8(ascii: "/")
        // The scheme, before the first "://".
        var separator = 0
        while separator + 2 < bytes.count,
              !(bytes[separator] == colon && bytes[separator + 1] == slash && bytes[separator + 2] == slash) {
            separator += 1
        }
        guard separator + 2 < bytes.count else { return nil }
        let scheme: String
        if separator == 4, asciiLowercasedEquals(bytes, 0..<4, "http") {
            scheme = "http"
        } else if separator == 5, asciiLowercasedEquals(bytes, 0..<5, "https") {
            scheme = "https"
        } else {
            return nil
        }
        // The rest, without a fragment; the authority ends at the first "/" or "?".
        let restStart = separator + 3
        var end = restStart
        while end < bytes.count, bytes[end] != UInt8(ascii: "#") { end += 1 }
        var authorityEnd = restStart
        while authorityEnd < end, bytes[authorityEnd] != slash, bytes[authorityEnd] != UInt8(ascii: "?") {
            authorityEnd += 1
        }
        var hostEnd = authorityEnd
        var lastColon: Int?
        for index in restStart..<authorityEnd {
            switch bytes[index] {
            case UInt8(ascii: "@"): return nil  // user info: a password in a URL ends up in logs
            case colon: lastColon = index
            case UInt8(ascii: "]"): lastColon = nil  // a colon inside an IPv6 literal
            default: break
            }
        }
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
        // The host: ASCII without white space (a "/" ended the authority), brackets around an IPv6
        // literal or none.
        guard hostEnd > restStart else { return nil }
        for index in restStart..<hostEnd {
            let byte = bytes[index]
            guard byte < 0x80, byte != 0x20, !(0x09...0x0D).contains(byte) else { return nil }
        }
        if (bytes[restStart] == UInt8(ascii: "[")) != (bytes[hostEnd - 1] == UInt8(ascii: "]")) { return nil }
        // The path and query, sent as written: printable ASCII only.
        for index in authorityEnd..<end {
            let byte = bytes[index]
            guard byte > 0x20, byte < 0x7F else { return nil }
        }
        let host = String(unsafeUninitializedCapacity: hostEnd - restStart) { buffer in
            for index in restStart..<hostEnd {
                let byte = bytes[index]
                buffer[index - restStart] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            }
            return hostEnd - restStart
        }
        let pathAndQuery: String
        if authorityEnd == end {
            pathAndQuery = "/"
        } else if bytes[authorityEnd] == slash {
            pathAndQuery = String(decoding: UnsafeBufferPointer(rebasing: bytes[authorityEnd..<end]), as: UTF8.self)
        } else {
            pathAndQuery = "/" + String(decoding: UnsafeBufferPointer(rebasing: bytes[authorityEnd..<end]), as: UTF8.self)
        }
        return (scheme, host, port, pathAndQuery)
    }

    /// Whether `bytes[range]`, ASCII upper case read as lower, is `lower` (lower-case ASCII).
    private static func asciiLowercasedEquals(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ lower: StaticString) -> Bool {
        guard range.count == lower.utf8CodeUnitCount else { return false }
        let expected = lower.utf8Start
        for (offset, index) in range.enumerated() {
            let byte = bytes[index]
            let folded = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            guard folded == expected[offset] else { return false }
        }
        return true
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
