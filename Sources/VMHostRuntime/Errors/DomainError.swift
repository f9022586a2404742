import VMHostWire

/// A failure of the domain: what a command's `error` event carries and what `-32004` holds as `data`.
///
/// On the wire: `{"kind", "code", "message", "input"}`.
/// - `network`: no connection, connection refused, DNS failure. `code` null.
/// - `timeout`: the request's deadline passed. `code` null.
/// - `server`: HTTP status ≥ 400. `code` is the status as a number.
/// - `business`: the envelope said `success: false`. `code` is the envelope's code (a string) and
///   `message` the envelope's message.
/// - `decode`: the body could not be parsed or had the wrong shape. `code` null.
/// - `unauthorized`: the server answered HTTP 401 to a call made with the session's token; the
///   session has ended. `code` 401.
///
/// Cancellation is never a `DomainError`: a cancelled call throws `CancellationError`.
public struct DomainError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        case network, timeout, server, business, decode, unauthorized
    }

    public var kind: Kind
    /// The HTTP status (`server`), the envelope's code (`business`), or null.
    public var code: JSON
    public var message: String
    /// The input (command) whose work failed; set by the runtime when the error reaches a view-model.
    public var input: String?

    public init(kind: Kind, code: JSON = .null, message: String, input: String? = nil) {
        self.kind = kind
        self.code = code
        self.message = message
        self.input = input
    }

    public static func network(_ message: String) -> DomainError { .init(kind: .network, message: message) }
    public static func timeout(_ message: String = "the request timed out") -> DomainError { .init(kind: .timeout, message: message) }
    public static func server(status: Int, message: String? = nil) -> DomainError {
        .init(kind: .server, code: .int(Int64(status)), message: message ?? "the server answered HTTP \(status)")
    }
    public static func business(code: String, message: String) -> DomainError {
        .init(kind: .business, code: .string(code), message: message)
    }
    public static func decode(_ message: String) -> DomainError { .init(kind: .decode, message: message) }
    /// The session ended because the server refused its token (HTTP 401).
    public static func unauthorized(_ message: String = "the session has ended: log in again") -> DomainError {
        .init(kind: .unauthorized, code: .int(401), message: message)
    }

    /// The error object of the wire.
    public var json: JSON {
        ["kind": .string(kind.rawValue), "code": code, "message": .string(message), "input": JSON(input)]
    }

    public var description: String { "\(kind.rawValue) error: \(message)" }
}
