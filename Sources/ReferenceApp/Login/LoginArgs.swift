import VMHost

/// The arguments of a `Login` view-model: `{mode?: "password" | "code"}`, `"password"` by default.
///
/// Errors name the argument: `params.args.mode: must be "password" or "code"`.
public struct LoginArgs: ViewModelArgs, Equatable {
    /// The form shown first.
    public var mode: LoginMode

    public init(mode: LoginMode = .password) {
        self.mode = mode
    }

    public init(reader: ObjectReader) throws(JSONDecodingError) {
        mode = try reader.optional("mode", default: .password)
    }
}
