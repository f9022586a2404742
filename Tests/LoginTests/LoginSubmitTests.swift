import Backend
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@testable import Login
extension LoginSuites {
    /// `submit` in both modes against the embedded backend: success navigates, failure shows and
    /// reports the error, and `isSubmitting` follows the command.
    @Suite("Login: submit")
    @HostActor
    struct LoginSubmitTests {
        static let navigateToProducts = event("navigate", ["route": "ProductList"])

        @Test func passwordLoginSucceedsAndNavigates() async {
            let harness = LoginHarness()
            harness.fill([("username", Demo.account), ("password", Demo.password)])
            let submit = harness.execute("submit")
            #expect(harness.recorder.take() == [changed("canSubmit", false), changed("isSubmitting", true)])
            await harness.recorder.settle()
            // canSubmit stays false: the session is open, a second submit is refused.
            #expect(harness.recorder.take() == [Self.navigateToProducts, changed("isSubmitting", false)])
            #expect(submit.outcome == .succeeded(nil))
            // The API client keeps the token for later calls (Authorization).
            #expect(harness.backend.token == "demo-token-1")
            #expect(harness.recorder.execute("submit").refusal == .disabled(reason: "the login succeeded already; the session is open"))
        }

        @Test func codeLoginSucceedsAndNavigates() async {
            let harness = LoginHarness(mode: .code)
            harness.fill([("phone", Demo.phone), ("code", Demo.code)])
            let submit = harness.execute("submit")
            #expect(harness.recorder.take() == [changed("canSubmit", false), changed("isSubmitting", true)])
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [Self.navigateToProducts, changed("isSubmitting", false)])
            #expect(submit.outcome == .succeeded(nil))
            #expect(harness.backend.token == "demo-token-1")
        }

        @Test func aWrongPasswordShowsTheFailureUntilAFieldChanges() async {
            let harness = LoginHarness()
            harness.fill([("username", Demo.account), ("password", "654321")])
            let submit = harness.execute("submit")
            await harness.recorder.settle()
            let error = domainError(.business(code: "1001", message: "用户名或密码错误"), input: "submit")
            #expect(harness.recorder.take() == [
                changed("canSubmit", false), changed("isSubmitting", true),
                changed("failureMessage", "用户名或密码错误"),
                changed("canSubmit", true), changed("isSubmitting", false),
                event("error", error.json),
            ])
            #expect(submit.outcome == .failed(error))
            #expect(harness.backend.token == nil)
            // Typing the same value again is no change; a different one clears the message.
            #expect(harness.send("password", "654321") == [])
            #expect(harness.send("password", "6543210") == [changed("failureMessage", nil)])
        }

        @Test func aWrongCodeShowsTheFailureAndThenSucceeds() async {
            let harness = LoginHarness(mode: .code)
            harness.fill([("phone", Demo.phone), ("code", "654321")])
            let submit = harness.execute("submit")
            await harness.recorder.settle()
            let error = domainError(.business(code: "1003", message: "验证码错误"), input: "submit")
            #expect(harness.recorder.take() == [
                changed("canSubmit", false), changed("isSubmitting", true),
                changed("failureMessage", "验证码错误"),
                changed("canSubmit", true), changed("isSubmitting", false),
                event("error", error.json),
            ])
            #expect(submit.outcome == .failed(error))
            #expect(harness.send("code", .string(Demo.code)) == [changed("failureMessage", nil)])
            harness.execute("submit")
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [
                changed("canSubmit", false), changed("isSubmitting", true),
                Self.navigateToProducts, changed("isSubmitting", false),
            ])
        }

        @Test func transportFailuresShowTheirMessageToo() async {
            let harness = LoginHarness()
            harness.fill([("username", Demo.account), ("password", Demo.password)])
            harness.backend.script(.authLogin, [.http(status: 503)])
            harness.execute("submit")
            await harness.recorder.settle()
            let error = BackendError.server(status: 503)
            #expect(harness.recorder.take()[2] == changed("failureMessage", .string(error.message(in: .zhHans))))
            // A successful retry clears the message: it described an attempt that is over.
            harness.execute("submit")
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [
                changed("canSubmit", false), changed("isSubmitting", true),
                changed("failureMessage", nil), Self.navigateToProducts,
                changed("isSubmitting", false),
            ])
        }

        @Test func switchingModesClearsTheFailure() async {
            let harness = LoginHarness()
            harness.fill([("username", Demo.account), ("password", "654321")])
            harness.execute("submit")
            await harness.recorder.settle()
            _ = harness.recorder.take()
            // The mode changes, and its observer clears the failure in the same turn, before the outputs derived from it.
            #expect(harness.send("mode", "code").prefix(2) == [changed("mode", "code"), changed("failureMessage", nil)])
        }

        @Test(arguments: [
            (LoginMode.password, [("username", "1380013800"), ("password", "123456")], "the username is not a valid mainland mobile number"),
            (LoginMode.password, [("username", "13800138000"), ("password", "12345")], "the password is shorter than 6 characters"),
            (LoginMode.code, [("phone", "1391234567"), ("code", "123456")], "the phone number is not a valid mainland mobile number"),
            (LoginMode.code, [("phone", "13912345678"), ("code", "12345")], "the code is not 6 digits"),
        ])
        func submitIsRefusedWhileCanSubmitIsFalse(mode: LoginMode, fields: [(String, String)], reason: String) {
            let harness = LoginHarness(mode: mode)
            harness.fill(fields)
            #expect(harness.recorder.value("canSubmit") == false)
            #expect(harness.recorder.execute("submit").refusal == .disabled(reason: reason))
            // Refused sends go to the caller only: nothing on the outputs, no error event.
            #expect(harness.recorder.take() == [])
        }

        @Test func submitIsRefusedWhileALoginRuns() async {
            let harness = LoginHarness()
            harness.fill([("username", Demo.account), ("password", Demo.password)])
            harness.backend.latency = .milliseconds(300)
            harness.execute("submit")
            #expect(harness.recorder.execute("submit").refusal == .disabled(reason: "already running"))
            #expect(harness.recorder.take() == [changed("canSubmit", false), changed("isSubmitting", true)])
            let records = await harness.advance(ms: 300)
            #expect(records == [Self.navigateToProducts, changed("isSubmitting", false)])
        }

        @Test func disposingCancelsTheLoginWithoutAnError() async {
            let harness = LoginHarness()
            harness.fill([("username", Demo.account), ("password", Demo.password)])
            harness.backend.latency = .milliseconds(300)
            let submit = harness.execute("submit")
            harness.recorder.context.dispose()
            await harness.recorder.settle()
            #expect(submit.outcome == .cancelled)
            // The command ends at once as cancelled; then dispose detaches the outputs. No error, no message.
            #expect(harness.recorder.take() == [
                changed("canSubmit", false), changed("isSubmitting", true),
                changed("canSubmit", true), changed("isSubmitting", false),
            ])
            _ = await harness.advance(ms: 1000)
            #expect(harness.backend.token == nil)
            #expect(harness.recorder.value("failureMessage") == .null)
        }
    }
}
