#if WebSocket
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import NIOCore
import NIOHTTP1

/// The checks of every request (`Host`) and of the WebSocket handshake (`Origin`, token).
///
/// - `Host` names the server: a page whose name was rebound to this machine's address (DNS
///   rebinding) sends its own name, which this server does not answer to, and is refused 403,
///   files included. Answered to: an IP address (v4, or v6 in brackets), `localhost` and names
///   under `.localhost`, the listen address, and the names given with `--allow-host`.
/// - `Origin`, when present (a browser), must be the server's own (`http://` + `Host`) or one of
///   ``allowedOrigins``; else 403.
/// - With a token, the handshake must carry `Authorization: Bearer <token>` (the scheme in any
///   case) or `?token=<token>`; else 401.
struct HandshakeGate: Sendable {
    let allowedOrigins: Set<String>
    /// Lowercased, without brackets or a trailing dot.
    let allowedHosts: Set<String>
    let token: String?

    init(allowedOrigins: [String], allowedHosts: [String], listenHost: String, token: String?) {
        self.allowedOrigins = Set(allowedOrigins.map { Self.normalized($0) })
        self.allowedHosts = Set((allowedHosts + [listenHost]).map { Self.hostName($0) })
        self.token = token
    }

    struct Verdict {
        /// Nil when the request may proceed.
        var status: HTTPResponse.Status?
        /// Why it may not, for the log (never the token).
        var reason = ""
    }

    /// The `Host` check, for every request.
    func checkHost(_ request: HTTPRequest) -> Verdict {
        guard let authority = request.authority, answersTo(authority: authority) else {
            return Verdict(status: .forbidden, reason: "its Host is not a name of this server")
        }
        return Verdict(status: nil)
    }

    /// Every check of a handshake: `Host`, `Origin`, token.
    func check(_ request: HTTPRequest) -> Verdict {
        let host = checkHost(request)
        if host.status != nil { return host }
        if let origin = request.headerFields[.origin] {
            let own = request.authority.map { "http://" + $0.lowercased() }
            let given = Self.normalized(origin)
            guard given == own || allowedOrigins.contains(given) else {
                return Verdict(status: .forbidden, reason: "its Origin is not allowed")
            }
        }
        if let token {
            let bearer = request.headerFields[.authorization].flatMap { Self.bearerToken($0) }
            let query = Self.queryValue("token", in: request.path ?? "")
            guard Self.same(bearer, token) || Self.same(query, token) else {
                return Verdict(status: .unauthorized, reason: "it carries no valid token")
            }
        }
        return Verdict(status: nil)
    }

    /// Whether `authority` (`host[:port]`, `[v6][:port]`) names this server.
    func answersTo(authority: String) -> Bool {
        guard let host = Self.host(ofAuthority: authority) else { return false }
        if Self.isAddress(host) { return true }
        let name = Self.hostName(host)
        return name == "localhost" || name.hasSuffix(".localhost") || allowedHosts.contains(name)
    }

    /// The host of an authority, without its port; nil when malformed.
    static func host(ofAuthority authority: String) -> String? {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else { return nil }
            return String(authority[...close])
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let name = parts.first, !name.isEmpty else { return nil }
        if parts.count == 2, !parts[1].allSatisfy(\.isASCIIDigit) { return nil }
        return String(name)
    }

    /// A literal IPv4 address, or an IPv6 one in brackets (`[::1]`).
    static func isAddress(_ host: String) -> Bool {
        var storage = in6_addr()
        if host.hasPrefix("["), host.hasSuffix("]") {
            return inet_pton(AF_INET6, String(host.dropFirst().dropLast()), &storage) == 1
        }
        return inet_pton(AF_INET, host, &storage) == 1
    }

    /// A host name as compared: lowercased, without brackets or a trailing dot.
    static func hostName(_ text: String) -> String {
        var name = text.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        while name.hasSuffix(".") { name.removeLast() }
        return name
    }

    /// The credentials of `Authorization: Bearer <token>`; the scheme is case-insensitive (RFC 9110 §11.1).
    static func bearerToken(_ value: String) -> String? {
        let trimmed = value.drop { $0 == " " }
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "bearer" else { return nil }
        return String(trimmed[space...].drop { $0 == " " })
    }

    /// Answers a refused handshake with `status`. It is written here, below the HTTP encoder,
    /// because a refused upgrade is otherwise answered 400 whatever the reason; the connection's
    /// ``ConnectionGuard`` drops that second answer, and the connection is closed after it.
    static func refuse(channel: any Channel, status: HTTPResponse.Status) async throws {
        let text = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n" + SecurityHeaders.refusalLines
            + "Content-Length: 0\r\nConnection: close\r\n\r\n"
        try await channel.eventLoop.flatSubmit {
            do {
                let context = try channel.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
                return context.writeAndFlush(NIOAny(ByteBuffer(string: text)))
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }.get()
    }

    static func normalized(_ origin: String) -> String {
        var text = origin.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    static func path(of request: HTTPRequest) -> Substring {
        let full = request.path ?? ""
        return full.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    /// The value of `name` in the query of `path`, percent-decoded.
    static func queryValue(_ name: String, in path: String) -> String? {
        guard let mark = path.firstIndex(of: "?") else { return nil }
        for pair in path[path.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.first == Substring(name) { return parts.count > 1 ? percentDecoded(parts[1]) : "" }
        }
        return nil
    }

    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Compares without stopping at the first difference.
    static func same(_ given: String?, _ expected: String) -> Bool {
        guard let given else { return false }
        let a = Array(given.utf8), b = Array(expected.utf8)
        var difference = a.count ^ b.count
        for index in 0..<max(a.count, b.count) {
            difference |= Int((index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0))
        }
        return difference == 0
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
#endif
