import VMHost

/// One request the loopback server received, as it came off the socket.
public struct RecordedRequest: Sendable, Hashable {
    public var method: String
    /// The path without the query, still percent-encoded.
    public var path: String
    /// The query parameters, decoded.
    public var query: [String: String]
    /// Header names lower-cased; a repeated header keeps its last value.
    public var headers: [String: String]
    /// The raw body.
    public var body: [UInt8]

    /// The value of the header `name` (any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The body parsed as JSON, or nil when it is empty or not JSON.
    public var json: JSON? { body.isEmpty ? nil : try? JSON.parse(body) }
}
