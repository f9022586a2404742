import Backend
import VMHostEventLoop
import VMHostRuntime
import Testing
import VMHostWire
@testable import Login
extension LoginSuites {
    /// `submit` in both modes against the embedded backend: success navigates, failure shows and
    /// reports the error, and `isSubmitting` follows the command.
    @Suite("Login: submit")
    @HostActor
    struct LoginSubmitTests {
        static let navigateToProducts = event("navigate", ["route": "ProductList"])

        @Test func passwordLoginSucceedsAndNavigates() async throws {
            let harness = LoginHarness()
            try harness.fill([("username", Demo.account), ("password", Demo.password)])
            try harness.recorder.execute("submit")
            #expect(harness.recorder.take() == [changed("isSubmitting", true), changed("canSubmit", false)])
            await harness.recorder.settle()
            // canSubmit stays false: the session is open, a second submit is refused.
            #expect(harness.recorder.take() == [Self.navigateToProducts, changed("isSubmitting", false)])
            #expect(harness.recorder.outcomes == [.succeeded(nil)])
            // The API client keeps the token for later calls (Authorization).
            #expect(harness.backend.token == "demo-token-1")
            #expect(throws: InputError.disabled(reason: "the login succeeded already; the session is open")) {
                try harness.recorder.execute("submit")
            }
        }

        @Test func codeLoginSucceedsAndNavigates() async throws {
            let harness = LoginHarness(mode: .code)
            try harness.fill([("phone", Demo.phone), ("code", Demo.code)])
            try harness.recorder.execute("submit")
            #expect(harness.recorder.take() == [changed("isSubmitting", true), changed("canSubmit", false)])
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [Self.navigateToProducts, changed("isSubmitting", false)])
            #expect(harness.recorder.outcomes == [.succeeded(nil)])
            #expect(harness.backend.token == "demo-token-1")
        }

        @Test func aWrongPasswordShowsTheFailureUntilAFieldChanges() async throws {
            let harness = LoginHarness()
            try harness.fill([("username", Demo.account), ("password", "654321")])
            try harness.recorder.execute("submit")
            await harness.recorder.settle()
            let error = DomainError.business(code: "1001", message: "用户名或密码错误").reaching(input: "submit", locale: .zhHans)
            #expect(harness.recorder.take() == [
                changed("isSubmitting", true), changed("canSubmit", false),
                changed("failureMessage", "用户名或密码错误"),
                changed("isSubmitting", false), changed("canSubmit", true),
                event("error", error.json),
            ])
            #expect(harness.recorder.outcomes == [.failed(error)])
            #expect(harness.backend.token == nil)
            // Typing the same value again is no change; a different one clears the message.
            #expect(try harness.send("password", "654321") == [])
            #expect(try harness.send("password", "6543210") == [changed("failureMessage", nil)])
        }

        @Test func aWrongCodeShowsTheFailureAndThenSucceeds() async throws {
            let harness = LoginHarness(mode: .code)
            try harness.fill([("phone", Demo.phone), ("code", "654321")])
            try harness.recorder.execute("submit")
            await harness.recorder.settle()
            let error = DomainError.business(code: "1003", message: "验证码错误").reaching(input: "submit", locale: .zhHans)
            #expect(harness.recorder.take() == [
                changed("isSubmitting", true), changed("canSubmit", false),
                changed("failureMessage", "验证码错误"),
                changed("isSubmitting", false), changed("canSubmit", true),
                event("error", error.json),
            ])
            #expect(harness.recorder.outcomes == [.failed(error)])
            #expect(try harness.send("code", .string(Demo.code)) == [changed("failureMessage", nil)])
            try harness.recorder.execute("submit")
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [
                changed("isSubmitting", true), changed("canSubmit", false),
                Self.navigateToProducts, changed("isSubmitting", false),
            ])
        }

        @Test func transportFailuresShowTheirMessageToo() async throws {
            let harness = LoginHarness()
            try harness.fill([("username", Demo.account), ("password", Demo.password)])
            harness.backend.script(.authLogin, [.http(status: 503)])
            try harness.recorder.execute("submit")
            await harness.recorder.settle()
            let error = DomainError.server(status: 503)
            #expect(harness.recorder.take()[2] == changed("failureMessage", .string(error.message)))
            // A successful retry clears the message: it described an attempt that is over.
            try harness.recorder.execute("submit")
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [
                changed("isSubmitting", true), changed("canSubmit", false),
                changed("failureMessage", nil), Self.navigateToProducts,
                changed("isSubmitting", false),
            ])
        }

        @Test func switchingModesClearsTheFailure() async throws {
            let harness = LoginHarness()
            try harness.fill([("username", Demo.account), ("password", "654321")])
            try harness.recorder.execute("submit")
            await harness.recorder.settle()
            _ = harness.recorder.take()
            #expect(try harness.send("mode", "code").prefix(2) == [changed("failureMessage", nil), changed("mode", "code")])
        }

        @Test(arguments: [
            (LoginMode.password, [("username", "1380013800"), ("password", "123456")], "the username is not a valid mainland mobile number"),
            (LoginMode.password, [("username", "13800138000"), ("password", "12345")], "the password is shorter than 6 characters"),
            (LoginMode.code, [("phone", "1391234567"), ("code", "123456")], "the phone number is not a valid mainland mobile number"),
            (LoginMode.code, [("phone", "13912345678"), ("code", "12345")], "the code is not 6 digits"),
        ])
        func submitIsRefusedWhileCanSubmitIsFalse(mode: LoginMode, fields: [(String, String)], reason: String) throws {
            let harness = LoginHarness(mode: mode)
            try harness.fill(fields)
            #expect(harness.recorder.value("canSubmit") == false)
            #expect(throws: InputError.disabled(reason: reason)) { try harness.recorder.execute("submit") }
            // Refused sends go to the caller only: nothing on the outputs, no error event.
            #expect(harness.recorder.take() == [])
        }

        @Test func submitIsRefusedWhileALoginRuns() async throws {
            let harness = LoginHarness()
            try harness.fill([("username", Demo.account), ("password", Demo.password)])
            harness.backend.latency = .milliseconds(300)
            try harness.recorder.execute("submit")
            #expect(throws: InputError.disabled(reason: "already running")) { try harness.recorder.execute("submit") }
            #expect(harness.recorder.take() == [changed("isSubmitting", true), changed("canSubmit", false)])
            let records = await harness.advance(ms: 300)
            #expect(records == [Self.navigateToProducts, changed("isSubmitting", false)])
        }

        @Test func disposingCancelsTheLoginWithoutAnError() async throws {
            let harness = LoginHarness()
            try harness.fill([("username", Demo.account), ("password", Demo.password)])
            harness.backend.latency = .milliseconds(300)
            try harness.recorder.execute("submit")
            harness.recorder.context.dispose()
            await harness.recorder.settle()
            #expect(harness.recorder.outcomes == [.cancelled])
            // The command ends at once as cancelled; then dispose detaches the outputs. No error, no message.
            #expect(harness.recorder.take() == [
                changed("isSubmitting", true), changed("canSubmit", false),
                changed("isSubmitting", false), changed("canSubmit", true),
            ])
            _ = await harness.advance(ms: 1000)
            #expect(harness.backend.token == nil)
            #expect(harness.recorder.value("failureMessage") == .null)
        }
    }
}
