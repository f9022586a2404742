import VMHostWire

/// An HTTP method: `GET`, `POST`, `PUT`, `PATCH`, `DELETE`, `HEAD`, or any other token.
public struct HTTPMethod: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    public static let get: HTTPMethod = "GET"
    public static let post: HTTPMethod = "POST"
    public static let put: HTTPMethod = "PUT"
    public static let patch: HTTPMethod = "PATCH"
    public static let delete: HTTPMethod = "DELETE"
    public static let head: HTTPMethod = "HEAD"
}

/// One request of an ``HTTPClient``: a method, a target, header fields and a body.
///
/// The target is a path (`/threads/7/messages`), resolved against the client's base URL, or an
/// absolute `http(s)` URL. Query items are appended percent-encoded.
///
/// ```swift
/// HTTPRequest(.get, "/threads/7/messages", query: [("before", cursor)])
/// try HTTPRequest(.post, "/threads/7/messages", json: NewMessage(text: text))
/// HTTPRequest(.put, "/avatar", headers: ["Content-Type": "image/png"], body: png)
/// ```
public struct HTTPRequest: Sendable, Hashable {
    public var method: HTTPMethod
    /// A path starting with `/` (after the client's base URL), or an absolute URL.
    public var target: String
    /// Query items, appended to the target percent-encoded, in order.
    public var query: [QueryItem]
    /// This request's header fields, set over the client's (``HTTPClient/headers``).
    public var headers: HTTPHeaders
    /// The body; nil for none.
    public var body: [UInt8]?
    /// This request's deadline, instead of the client's ``HTTPClient/timeout``.
    public var timeout: Duration?

    /// One query item, not encoded.
    public struct QueryItem: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A request of `method` to `target` with `body` as bytes.
    public init(
        _ method: HTTPMethod, _ target: String, query: [(String, String)] = [], headers: HTTPHeaders = [:],
        body: [UInt8]? = nil, timeout: Duration? = nil
    ) {
        self.method = method
        self.target = target
        self.query = query.map { QueryItem($0.0, $0.1) }
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// A request whose body is `json` written as JSON (`Content-Type: application/json`), with the
    /// framework's ``JSON`` writer: no Foundation.
    public init<Body: Encodable>(
        _ method: HTTPMethod, _ target: String, query: [(String, String)] = [], headers: HTTPHeaders = [:],
        json: Body, timeout: Duration? = nil
    ) throws(HTTPError) {
        let bytes: [UInt8]
        do {
            bytes = try JSONValueEncoder.encode(json).serializedOrThrow()
        } catch {
            throw HTTPError(.invalidRequest, "the request body cannot be written as JSON (\(error))")
        }
        var headers = headers
        if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        self.init(method, target, query: query, headers: headers, body: bytes, timeout: timeout)
    }
}

/// A complete response: its status, header fields and body.
public struct HTTPResponse: Sendable, Hashable {
    /// The HTTP status (`200`).
    public var status: Int
    /// The header fields, in order.
    public var headers: HTTPHeaders
    /// The body, at most ``HTTPClient/maxResponseBytes`` long.
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body parsed as JSON; ``HTTPError/Kind/undecodable`` when it is not JSON (the error says
    /// where, never what: a body may hold a secret).
    public func json() throws(HTTPError) -> JSON {
        let parsed = body.withUnsafeBytes { bytes in Result { () throws(JSONParseError) in try JSON.parse(bytes) } }
        switch parsed {
        case .success(let json): return json
        case .failure(let error):
            throw HTTPError(.undecodable, "the response body is not JSON (\(error.message) at line \(error.line), column \(error.column))")
        }
    }

    /// The body as a `Decodable` value, read from its JSON; ``HTTPError/Kind/undecodable`` naming
    /// the member that does not fit (`$.items[2].id: expected a string, got a number`).
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self) throws(HTTPError) -> Value {
        let json = try json()
        do {
            return try JSONValueDecoder.decode(type, from: json)
        } catch {
            throw HTTPError(.undecodable, "the response body does not fit \(Value.self): \(error)")
        }
    }
}
