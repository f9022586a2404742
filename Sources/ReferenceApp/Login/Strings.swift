import Backend
import VMHost

/// Every string of the Login view-model: display strings in both locales, then the (English,
/// developer-facing) reasons a command is disabled.
///
/// - Important: No string here may ever be built from the password or the code.
enum Strings {
    /// The send-code button before any send and after the countdown ends.
    static let getCode = LocalizedText(zh: "获取验证码", en: "Get code")

    /// The send-code button while the countdown runs: `重新发送(59s)`.
    static func resend(seconds: Int) -> LocalizedText {
        LocalizedText(zh: "重新发送(\(seconds)s)", en: "Resend (\(seconds)s)")
    }

    /// The send-code button's title for `countdown` seconds left (0: no countdown).
    static func sendCodeTitle(countdown: Int) -> LocalizedText {
        countdown > 0 ? resend(seconds: countdown) : getCode
    }

    /// Reasons given with -32003 (`{input, reason}`); for the client's developer, not the user.
    enum Reason {
        static let phoneInvalid = "the phone number is not a valid mainland mobile number"
        static func countdownRunning(_ seconds: Int) -> String { "a code was just sent; wait \(seconds)s before sending another" }
        static let usernameInvalid = "the username is not a valid mainland mobile number"
        static let passwordTooShort = "the password is shorter than \(LoginValidation.minimumPasswordLength) characters"
        static let alreadyLoggedIn = "the login succeeded already; the session is open"
        static let codeInvalid = "the code is not \(LoginValidation.codeLength) digits"
    }
}
