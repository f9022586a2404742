import VMHost

/// What a successful login hands back: `{token}` on the wire.
///
/// - Important: The token is a secret: it is never logged and never part of an error message.
///   `description` hides it.
public struct Session: Sendable, Hashable, CustomStringConvertible {
    public var token: String

    public init(token: String) { self.token = token }

    public init(json: JSON) throws(BackendError) {
        token = try JSONFields(json, context: "session").string("token")
    }

    public var json: JSON { ["token": .string(token)] }

    public var description: String { "Session(token: ***)" }
}
