import Backend
import VMHost

/// The login screen: two modes (account + password, phone + SMS code), UI state derived from the
/// mode, field validation, an SMS countdown on the host's clock, and the login command.
///
/// Inputs: `mode`, `username`, `password`, `phone`, `code` (values), `sendCode` and `submit`
/// (commands, policy ignore). Outputs: the properties below, and the events `error` and
/// `navigate {route:"ProductList"}`. The wire contract is in `protocol/viewmodels/Login.md`.
///
/// The field values themselves are no outputs: the password and the code stay inside the host, and
/// only their validity is published. A field that changes clears the last failure shown.
@HostActor
public final class LoginViewModel: ViewModel {
    public typealias Args = LoginArgs
    public static let kind = "Login"
    /// How long, in seconds, the send-code button stays disabled after a code was sent.
    public static let countdownSeconds = 60

    // MARK: Inputs

    @Field public var mode = LoginMode.password
    @Input(map: LoginValidation.normalizedMobileNumber) public var username = ""
    @Input(secret: true) public var password = ""
    @Input(map: LoginValidation.normalizedMobileNumber) public var phone = ""
    @Input(secret: true) public var code = ""
    /// Posts the phone, then runs the countdown (``SMSCodeCooldown``); a failed send starts none.
    public let sendCode = Command(.ignore, disabled: { $0.sendCodeBlocker() }) { vm in try await vm.sendSMSCode() }
    /// Logs in with the current mode's credentials; on success emits `navigate`.
    public let submit = Command(.ignore, disabled: { $0.submitBlocker() }) { vm in try await vm.logIn() }

    // MARK: Outputs

    @Derived({ LoginAppearance.tabColor(.code, mode: $0.mode) }) var codeTabColor: LoginAppearance.TabColor
    @Derived({ LoginAppearance.tabColor(.password, mode: $0.mode) }) var passwordTabColor: LoginAppearance.TabColor
    @Derived({ LoginAppearance.isHidden(.code, mode: $0.mode) }) public var hideCodeLine: Bool
    @Derived({ LoginAppearance.isHidden(.code, mode: $0.mode) }) public var hideCodeContainer: Bool
    @Derived({ LoginAppearance.isHidden(.password, mode: $0.mode) }) public var hidePasswordLine: Bool
    @Derived({ LoginAppearance.isHidden(.password, mode: $0.mode) }) public var hidePasswordContainer: Bool
    @Derived({ LoginValidation.isMobileNumber($0.username) }) public var usernameValid: Bool
    @Derived({ LoginValidation.isPassword($0.password) }) public var passwordValid: Bool
    @Derived({ LoginValidation.isMobileNumber($0.phone) }) public var phoneValid: Bool
    @Derived({ LoginValidation.isSMSCode($0.code) }) public var codeValid: Bool
    @Derived({ !$0.submit.isRunning && $0.submitBlocker() == nil }) public var canSubmit: Bool
    @Derived({ $0.phoneValid && $0.countdown == 0 && !$0.sendCode.isRunning }) public var canSendCode: Bool
    /// Seconds left before another code may be sent; 0 when no countdown runs.
    @Output(schema: ["type": "integer", "minimum": 0, "maximum": .int(Int64(countdownSeconds))])
    public internal(set) var countdown = 0
    @Derived({ Strings.sendCodeTitle(countdown: $0.countdown)($0.context.locale) }) public var sendCodeTitle: String
    @Derived({ $0.submit.isRunning }) public var isSubmitting: Bool
    /// The message of the last failed login; nil before any, and again once a field changes.
    @Output public internal(set) var failureMessage: String? = nil
    public let navigate = Event<LoginNavigation>()

    // MARK: State

    let api: any APIClient
    /// The SMS countdowns of the app session, shared by every `Login` of the host.
    let cooldown: SMSCodeCooldown
    /// True once a login succeeded: a second `submit` is refused (the session is open).
    @Tracked var loggedIn = false
    /// The countdown's next tick, while one is armed.
    var countdownTimer: ClockTimer?

    /// The kind's factory. Every `Login` it makes shares `cooldown`, so the SMS countdown of a
    /// phone outlives the screen.
    public static func factory(api: any APIClient, cooldown: SMSCodeCooldown? = nil) -> ViewModelFactory {
        let shared = cooldown ?? SMSCodeCooldown()
        return ViewModelFactory { args in LoginViewModel(args: args, api: api, cooldown: shared) }
    }

    public init(args: Args, api: any APIClient, cooldown: SMSCodeCooldown? = nil) {
        self.api = api
        self.cooldown = cooldown ?? SMSCodeCooldown()
        mode = args.mode
        // A phone typed again resumes the countdown the session keeps for it.
        observe($phone) { vm, number in vm.resumeCountdown(of: number) }
        // The user is correcting the form: the last failure no longer describes it.
        observe($mode, $username, $password, $phone, $code) { vm in vm.failureMessage = nil }
    }

    /// Why the current mode's fields cannot be submitted, or nil when they can.
    func submitBlocker() -> String? {
        if loggedIn { return Strings.Reason.alreadyLoggedIn }
        switch mode {
        case .password:
            if !usernameValid { return Strings.Reason.usernameInvalid }
            if !passwordValid { return Strings.Reason.passwordTooShort }
        case .code:
            if !phoneValid { return Strings.Reason.phoneInvalid }
            if !codeValid { return Strings.Reason.codeInvalid }
        }
        return nil
    }

    /// Why no code can be sent now, or nil when one can.
    func sendCodeBlocker() -> String? {
        if countdown > 0 { return Strings.Reason.countdownRunning(countdown) }
        if !phoneValid { return Strings.Reason.phoneInvalid }
        return nil
    }
}
