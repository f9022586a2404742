import VMHost

/// Which login form is shown: account and password, or phone and SMS code.
///
/// On the wire it is the string `"password"` or `"code"` (the `mode` arg, input and property). A
/// value that is neither is refused without being echoed: a client that mixed up its fields could
/// have sent a secret here.
public enum LoginMode: String, Sendable, CaseIterable, Codable, InputValue {
    case password
    case code
}
