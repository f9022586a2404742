import VMHostRuntime
import VMHostWire

/// The arguments of a `Login` view-model: `{mode?: "password" | "code"}`, `"password"` by default.
///
/// Errors name the argument: `params.args.mode: must be "password" or "code"`.
public struct LoginArgs: ViewModelArgs, Equatable {
    /// The form shown first.
    public var mode: LoginMode

    public init(mode: LoginMode = .password) {
        self.mode = mode
    }

    public init(reader: JSONReader) throws(JSONDecodingError) {
        try reader.rejectUnknown(["mode"])
        mode = try reader.optional("mode", as: LoginMode.self) ?? .password
    }

    public static var schema: JSON {
        var mode = LoginMode.jsonSchema
        if case .object(var object) = mode {
            object.append("default", "password")
            mode = .object(object)
        }
        return ["type": "object", "properties": ["mode": mode], "additionalProperties": false]
    }
}
