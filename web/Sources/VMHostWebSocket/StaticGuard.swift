#if WebSocket
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import Hummingbird

/// The headers of every HTTP answer of the server (protocol/SPEC.md §12, "Static files").
enum SecurityHeaders {
    /// Files are served under a policy that allows only the server's own scripts, styles and
    /// WebSocket, and no framing (clickjacking); content types are never guessed.
    static let contentSecurityPolicy =
        "default-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

    static let common: [(HTTPField.Name, String)] = [
        (.xContentTypeOptions, "nosniff"),
        (.contentSecurityPolicy, contentSecurityPolicy),
        (.xFrameOptions, "DENY"),
        // The token may be in a page's query: it is never sent on as a referrer.
        (.referrerPolicy, "no-referrer"),
    ]
    /// A file may change under a running server (a checkout being edited): revalidated each time.
    static let fileCaching = "no-cache"
    /// Refusals, errors and redirects are never stored.
    static let refusalCaching = "no-store"

    /// The header lines of a refusal written by hand (a refused handshake), each ending in CRLF.
    static let refusalLines: String =
        (common + [(.cacheControl, refusalCaching)]).map { "\($0.0.rawName): \($0.1)\r\n" }.joined()

    static func apply(to headers: inout HTTPFields, caching: String) {
        for (name, value) in common { headers[name] = value }
        if headers[.cacheControl] == nil { headers[.cacheControl] = caching }
    }
}

extension HTTPField.Name {
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}

/// First in the router: refuses a request whose `Host` the server does not answer to (403) and a
/// path no file may have, before any file is looked up, and adds ``SecurityHeaders`` to every
/// answer.
///
/// A path is refused when, percent-decoded, it holds a control character (`%00` would end the
/// file's name early while its extension still chose the content type: 400), when its escapes are
/// malformed (400), when one of its segments starts with a dot (`/.env`, `/.git/config`, `..`:
/// 404, as if absent), or when the file it names (or the `index.html` of the folder it names) is,
/// once symbolic links are followed, outside the static folder (404).
struct StaticGuard<Context: RequestContext>: RouterMiddleware {
    let gate: HandshakeGate
    /// The static folder with its links followed, if there is one.
    let root: String?

    init(gate: HandshakeGate, staticDirectory: String?) {
        self.gate = gate
        self.root = staticDirectory.flatMap(Self.resolved)
    }

    @concurrent
    func handle(
        _ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let status = gate.checkHost(request.head).status { return Self.refusal(status) }
        if let status = Self.refusal(path: HandshakeGate.path(of: request.head), root: root) { return Self.refusal(status) }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        SecurityHeaders.apply(
            to: &response.headers, caching: response.status == .ok || response.status == .notModified
                ? SecurityHeaders.fileCaching : SecurityHeaders.refusalCaching)
        return response
    }

    static func refusal(_ status: HTTPResponse.Status) -> Response {
        var response = Response(status: status)
        SecurityHeaders.apply(to: &response.headers, caching: SecurityHeaders.refusalCaching)
        return response
    }

    /// The status refusing `path` (without its query), or nil when it may name a file. With
    /// `root` (a folder with its links followed), a path whose file lies outside it is refused too.
    static func refusal(path: Substring, root: String? = nil) -> HTTPResponse.Status? {
        var decoded: [UInt8] = []
        var bytes = Array(path.utf8)[...]
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                continue
            }
            guard bytes.count >= 2, let high = hexValue(bytes.popFirst()!), let low = hexValue(bytes.popFirst()!) else {
                return .badRequest
            }
            decoded.append(high << 4 | low)
        }
        if decoded.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return .badRequest }
        if decoded.split(separator: UInt8(ascii: "/")).contains(where: { $0.first == UInt8(ascii: ".") }) { return .notFound }
        if let root, !isInside(root: root, path: decoded) { return .notFound }
        return nil
    }

    /// Whether the file `path` (decoded, without control characters) names under `root`, and the
    /// `index.html` of the folder it names, stay inside `root` once links are followed. A file
    /// that does not exist is inside: the file server answers 404 for it.
    static func isInside(root: String, path: [UInt8]) -> Bool {
        let relative = String(decoding: path.drop { $0 == UInt8(ascii: "/") }, as: UTF8.self)
        let full = relative.isEmpty ? root : root + "/" + relative
        guard let file = resolved(full) else { return true }
        guard file == root || file.hasPrefix(root == "/" ? "/" : root + "/") else { return false }
        guard let index = resolved(full + "/index.html") else { return true }
        return index.hasPrefix(root == "/" ? "/" : root + "/")
    }

    /// `path` with every link followed, absolute; nil when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
#endif
