import VMHostRuntime
import VMHostWire

/// Which login form is shown: account and password, or phone and SMS code.
///
/// On the wire it is the string `"password"` or `"code"` (the `mode` arg, input and property).
public enum LoginMode: String, Sendable, CaseIterable, Equatable, JSONEncodable, InputValue {
    case password
    case code

    public var json: JSON { .string(rawValue) }

    public static var jsonSchema: JSON { ["type": "string", "enum": ["password", "code"]] }

    public static var jsonTypeDescription: String { #""password" or "code""# }

    /// Reads `"password"` or `"code"`; anything else fails naming `path`.
    ///
    /// The rejected text is not echoed: a client that mixed up its fields could have sent a secret here.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard case .string(let text) = json else {
            throw JSONDecodingError(path: path, problem: "expected \(Self.jsonTypeDescription), got \(json.typeName)")
        }
        guard let mode = LoginMode(rawValue: text) else {
            throw JSONDecodingError(path: path, problem: "must be \(Self.jsonTypeDescription)")
        }
        self = mode
    }
}
