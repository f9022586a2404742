import VMHost

/// A request as the demo server sees it: what the loopback HTTP server parsed off a socket, or
/// what the embedded backend built in-process.
public struct DemoRequest: Sendable, Hashable {
    /// `GET`, `POST`, `PUT` or `DELETE`.
    public var method: String
    /// The path, still percent-encoded, without the query (`/menus/m1/groups`).
    public var path: String
    /// The query parameters, decoded.
    public var query: [String: String]
    /// The parsed JSON body, or nil when there was none.
    public var body: JSON?

    public init(method: String, path: String, query: [String: String] = [:], body: JSON? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.body = body
    }
}

/// The demo server's answer: an HTTP status and an envelope.
public struct DemoResponse: Sendable, Hashable {
    public var status: Int
    public var body: JSON

    public init(status: Int, body: JSON) {
        self.status = status
        self.body = body
    }

    /// `200` with a success envelope.
    public static func ok(_ data: JSON = .null, page: PageInfo? = nil) -> DemoResponse {
        DemoResponse(status: 200, body: Envelope.ok(data, page: page).json)
    }

    /// `200` with a failure envelope: a business failure.
    public static func business(code: String, message: String) -> DemoResponse {
        DemoResponse(status: 200, body: Envelope.failure(code: code, message: message).json)
    }

    /// An HTTP error status; the body is a failure envelope whose code is the status.
    public static func status(_ status: Int, _ message: String) -> DemoResponse {
        DemoResponse(status: status, body: Envelope.failure(code: String(status), message: message).json)
    }
}
