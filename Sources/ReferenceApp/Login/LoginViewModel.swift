import Backend
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// The login screen: two modes (account + password, phone + SMS code), UI state derived from the
/// mode, field validation, an SMS countdown on the host's clock, and the login command.
///
/// Inputs: `mode`, `username`, `password`, `phone`, `code` (values), `sendCode` and `submit`
/// (commands, policy ignore). Outputs: the properties below, and the events `error` and
/// `navigate {route:"ProductList"}`. The wire contract is in `protocol/viewmodels/Login.md`.
///
/// The field values themselves are no outputs: the password and the code stay inside the host, and
/// only their validity is published.
@HostActor
public final class LoginViewModel: ViewModel {
    public typealias Args = LoginArgs
    public static let kind = "Login"
    /// How long, in seconds, the send-code button stays disabled after a code was sent.
    public static let countdownSeconds = 60
    static let countdownSchema: JSON = ["type": "integer", "minimum": 0, "maximum": .int(Int64(countdownSeconds))]

    // MARK: Outputs

    public let mode: Property<LoginMode>
    public let codeTabColor: Property<String>
    public let passwordTabColor: Property<String>
    public let hideCodeLine: Property<Bool>
    public let hideCodeContainer: Property<Bool>
    public let hidePasswordLine: Property<Bool>
    public let hidePasswordContainer: Property<Bool>
    public let usernameValid: Property<Bool>
    public let passwordValid: Property<Bool>
    public let phoneValid: Property<Bool>
    public let codeValid: Property<Bool>
    public let canSubmit: Property<Bool>
    public let canSendCode: Property<Bool>
    /// Seconds left before another code may be sent; 0 when no countdown runs.
    public let countdown: Property<Int>
    public let sendCodeTitle: Property<String>
    public let isSubmitting: Property<Bool>
    /// The message of the last failed login; nil before any, and again once a field changes.
    public let failureMessage: Property<String?>
    public let navigate: Event<LoginNavigation>

    // MARK: State

    let context: ViewModelContext
    let api: any APIClient
    /// The form's fields: properties for ``derive(_:from:_:)``, but never declared as outputs.
    let username = Property("username", "")
    let password = Property("password", "")
    let phone = Property("phone", "")
    let code = Property("code", "")
    /// The countdown's next tick, while one is armed.
    var countdownTimer: ClockTimer?

    /// The kind's factory, for the host's catalog.
    public static func factory(api: any APIClient) -> ViewModelFactory {
        ViewModelFactory(LoginViewModel.self) { args, context in LoginViewModel(args: args, context: context, api: api) }
    }

    public init(args: Args, context: ViewModelContext, api: any APIClient) {
        self.context = context
        self.api = api
        let initial = args.mode
        // Declared with the values they derive to, so that creating the view-model changes nothing.
        mode = context.property("mode", initial)
        codeTabColor = context.property(
            "codeTabColor", LoginAppearance.tabColor(.code, mode: initial), schema: LoginAppearance.tabColorSchema)
        passwordTabColor = context.property(
            "passwordTabColor", LoginAppearance.tabColor(.password, mode: initial), schema: LoginAppearance.tabColorSchema)
        hideCodeLine = context.property("hideCodeLine", LoginAppearance.isHidden(.code, mode: initial))
        hideCodeContainer = context.property("hideCodeContainer", LoginAppearance.isHidden(.code, mode: initial))
        hidePasswordLine = context.property("hidePasswordLine", LoginAppearance.isHidden(.password, mode: initial))
        hidePasswordContainer = context.property("hidePasswordContainer", LoginAppearance.isHidden(.password, mode: initial))
        usernameValid = context.property("usernameValid", false)
        passwordValid = context.property("passwordValid", false)
        phoneValid = context.property("phoneValid", false)
        codeValid = context.property("codeValid", false)
        canSubmit = context.property("canSubmit", false)
        canSendCode = context.property("canSendCode", false)
        countdown = context.property("countdown", 0, schema: Self.countdownSchema)
        sendCodeTitle = context.property("sendCodeTitle", Strings.getCode(context.locale))
        isSubmitting = context.property("isSubmitting", false)
        failureMessage = context.property("failureMessage", String?.none)
        navigate = context.event("navigate")

        declareFieldInputs()
        let sendCode = declareSendCode()
        let submit = declareSubmit()
        deriveAppearance()
        deriveValidity()
        isSubmitting.bind(to: submit.isExecuting)
        derive(canSubmit, from: [mode, usernameValid, passwordValid, phoneValid, codeValid, isSubmitting]) { [unowned self] in
            !isSubmitting.value && submitBlocker() == nil
        }
        sendCodeTitle.bind(to: countdown) { [locale = context.locale] in Strings.sendCodeTitle(countdown: $0)(locale) }
        // `unowned sendCode`: the command's own `isExecuting` keeps this closure, so a strong capture
        // would be a cycle that outlives the view-model (the context holds the command meanwhile).
        derive(canSendCode, from: [phoneValid, countdown, sendCode.isExecuting]) { [unowned self, unowned sendCode] in
            phoneValid.value && countdown.value == 0 && !sendCode.isExecuting.value
        }
    }

    // MARK: Fields

    private func declareFieldInputs() {
        context.value("mode", of: LoginMode.self) { [unowned self] in select($0) }
        context.value("username", of: String.self) { [unowned self] in edit(username, $0) }
        context.value("password", of: String.self, secret: true) { [unowned self] in edit(password, $0) }
        context.value("phone", of: String.self) { [unowned self] in edit(phone, $0) }
        context.value("code", of: String.self, secret: true) { [unowned self] in edit(code, $0) }
    }

    /// Shows another form. The failure shown belonged to the other form, so it goes too.
    private func select(_ newMode: LoginMode) {
        guard newMode != mode.value else { return }
        failureMessage.value = nil
        mode.value = newMode
    }

    /// Sets a field; a change clears the last failure first (the user is correcting it).
    private func edit(_ field: Property<String>, _ text: String) {
        guard text != field.value else { return }
        failureMessage.value = nil
        field.value = text
    }

    /// Tab colours and hidden lines and containers, from the mode alone.
    private func deriveAppearance() {
        codeTabColor.bind(to: mode) { LoginAppearance.tabColor(.code, mode: $0) }
        passwordTabColor.bind(to: mode) { LoginAppearance.tabColor(.password, mode: $0) }
        hideCodeLine.bind(to: mode) { LoginAppearance.isHidden(.code, mode: $0) }
        hideCodeContainer.bind(to: mode) { LoginAppearance.isHidden(.code, mode: $0) }
        hidePasswordLine.bind(to: mode) { LoginAppearance.isHidden(.password, mode: $0) }
        hidePasswordContainer.bind(to: mode) { LoginAppearance.isHidden(.password, mode: $0) }
    }

    private func deriveValidity() {
        usernameValid.bind(to: username, LoginValidation.isMobileNumber)
        passwordValid.bind(to: password, LoginValidation.isPassword)
        phoneValid.bind(to: phone, LoginValidation.isMobileNumber)
        codeValid.bind(to: code, LoginValidation.isSMSCode)
    }

    /// Why the current mode's fields cannot be submitted, or nil when they can.
    func submitBlocker() -> String? {
        switch mode.value {
        case .password:
            if !usernameValid.value { return Strings.Reason.usernameInvalid }
            if !passwordValid.value { return Strings.Reason.passwordTooShort }
        case .code:
            if !phoneValid.value { return Strings.Reason.phoneInvalid }
            if !codeValid.value { return Strings.Reason.codeInvalid }
        }
        return nil
    }
}
