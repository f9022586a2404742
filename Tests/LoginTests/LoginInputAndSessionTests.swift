import Backend
import BackendTesting
import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
import VMHostWire
@testable import Login

extension LoginSuites {
    /// Login input as people type it (normalized phone numbers), a failure cleared by the next
    /// attempt, and the SMS countdown kept by the app session across `Login` instances.
    @Suite("Login: typed input and the session's countdown")
    @HostActor
    struct LoginInputAndSessionTests {
        @Test(arguments: [
            ("13912345678", "13912345678"), ("139 1234 5678", "13912345678"), ("139-1234-5678", "13912345678"),
            ("+86 139 1234 5678", "13912345678"), ("8613912345678", "13912345678"), ("+86-139-1234-5678", "13912345678"),
            ("１３９１２３４５６７８", "13912345678"), ("＋８６　１３９１２３４５６７８", "13912345678"),
            ("0086 139", "0086139"), ("86 139", "86139"), ("139.1234", "139.1234"),
        ])
        func aPhoneIsNormalizedAsTyped(typed: String, normalized: String) {
            #expect(LoginValidation.normalizedMobileNumber(typed) == normalized)
        }

        @Test func theServerGetsTheNormalizedNumbers() async throws {
            let recorder = ViewModelRecorder(kind: LoginViewModel.kind)
            let api = StubAPI()
            recorder.keep(LoginViewModel(args: LoginArgs(mode: .code), context: recorder.context, api: api))
            try recorder.send("phone", "+86 139-1234-5678")
            #expect(recorder.value("phoneValid") == true)
            api.answerNext(.authSMSCode, with: .success(.done))
            try recorder.execute("sendCode")
            await recorder.finished(0)
            try recorder.send("code", "123456")
            api.answerNext(.authLoginCode, with: .success(.session(Session(token: "t"))))
            try recorder.execute("submit")
            await recorder.finished(1)
            // The session is open: a new Login logs in with the password.
            let second = ViewModelRecorder(kind: LoginViewModel.kind, clock: recorder.clock, handle: "vm2")
            second.keep(LoginViewModel(args: LoginArgs(mode: .password), context: second.context, api: api))
            try second.send("username", "１３８ ００１３ ８０００")
            try second.send("password", "123456")
            api.answerNext(.authLogin, with: .success(.session(Session(token: "t"))))
            try second.execute("submit")
            await second.finished(0)
            #expect(api.calls(to: .authSMSCode).map(\.arguments) == [["phone": "13912345678"]])
            #expect(api.calls(to: .authLoginCode).first?.arguments["phone"] == "13912345678")
            #expect(api.calls(to: .authLogin).first?.arguments["username"] == "13800138000")
        }

        @Test func aNewAttemptClearsTheLastFailureAsItStarts() async throws {
            let harness = LoginHarness()
            try harness.fill([("username", Demo.account), ("password", "654321")])
            try harness.recorder.execute("submit")
            await harness.recorder.settle()
            #expect(harness.recorder.value("failureMessage") == "用户名或密码错误")
            _ = harness.recorder.take()
            // The same fields again (nothing typed): the message goes when the attempt starts.
            harness.backend.latency = .milliseconds(100)
            try harness.recorder.execute("submit")
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [
                changed("isSubmitting", true), changed("canSubmit", false), changed("failureMessage", nil),
            ])
            await harness.recorder.advance(ms: 100)
            #expect(harness.recorder.take() == [
                changed("failureMessage", "用户名或密码错误"), changed("isSubmitting", false), changed("canSubmit", true),
                event("error", DomainError.business(code: "1001", message: "用户名或密码错误").reaching(input: "submit", locale: .zhHans).json),
            ])
        }

        @Test func anEnglishLoginShowsTheFriendlyTextOfATransportFailure() async throws {
            let harness = LoginHarness(locale: .en)
            try harness.fill([("username", Demo.account), ("password", Demo.password)])
            harness.backend.script(.authLogin, [.network])
            try harness.recorder.execute("submit")
            await harness.recorder.settle()
            #expect(harness.recorder.value("failureMessage") == "No connection. Check your network and try again.")
        }

        /// Two `Login`s of one app session (one host): the second, opened while the first one's
        /// countdown runs, does not allow an immediate resend to the same phone.
        @Test func reopeningLoginKeepsTheCountdownOfThePhone() async throws {
            let session = AppSession()
            let first = try await session.loginThatSentACode()
            #expect(first.value("countdown") == 60)
            await first.advance(ms: 20_500)
            first.context.dispose()

            let second = session.login(handle: "l2")
            // Typed differently, the same phone: 39.5 s are left, shown as 40.
            try second.send("phone", "139 1234 5678")
            #expect(second.take() == [
                changed("countdown", 40), changed("sendCodeTitle", "重新发送(40s)"), changed("phoneValid", true),
            ])
            #expect(second.value("canSendCode") == false)
            #expect(throws: InputError.disabled(reason: "a code was just sent; wait 40s before sending another")) {
                try second.execute("sendCode")
            }
            // The first tick comes when the shown second is over, then one per second.
            #expect(await advance(second, ms: 499) == [])
            #expect(await advance(second, ms: 1) == [changed("countdown", 39), changed("sendCodeTitle", "重新发送(39s)")])
            #expect(await advance(second, ms: 39_000) .last == changed("canSendCode", true))
            #expect(second.value("countdown") == 0)
            try second.execute("sendCode")
            await second.settle()
            #expect(second.value("countdown") == 60)
        }

        @Test func anotherPhoneIsNotHeldBack() async throws {
            let session = AppSession()
            _ = try await session.loginThatSentACode()
            let second = session.login(handle: "l2")
            try second.send("phone", "13800138000")
            #expect(second.take() == [changed("phoneValid", true), changed("canSendCode", true)])
            #expect(session.cooldown.remaining(for: "13800138000", at: session.clock.now) == .zero)
            #expect(session.cooldown.remaining(for: Demo.phone, at: session.clock.now) == .seconds(60))
        }

        @Test func loginsOfOneFactoryShareTheirCooldown() async throws {
            let clock = ManualClock()
            let backend = EmbeddedBackend(clock: clock)
            let client = InProcessConnection(kinds: [LoginViewModel.factory(api: backend)], clock: clock)
            await client.request("vm.create", ["kind": "Login", "args": ["mode": "code"], "id": "a"])
            await client.request("vm.send", ["vm": "a", "input": "phone", "value": .string(Demo.phone)])
            #expect(await client.request("vm.send", ["vm": "a", "input": "sendCode"]).errorCode == nil)
            await client.request("vm.dispose", ["vm": "a"])
            await client.request("vm.create", ["kind": "Login", "args": ["mode": "code"], "id": "b"])
            await client.request("vm.send", ["vm": "b", "input": "phone", "value": .string(Demo.phone)])
            let values = await client.request("vm.get", ["vm": "b", "outputs": ["countdown", "canSendCode"]]).result?["values"]
            #expect(values == ["countdown": 60, "canSendCode": false])
            #expect(await client.request("vm.send", ["vm": "b", "input": "sendCode"]).errorCode == -32003)
        }

        /// One app session: a clock, the session's cooldown and a backend shared by its `Login`s.
        @HostActor
        final class AppSession {
            let clock = ManualClock()
            let cooldown = SMSCodeCooldown()
            let backend: EmbeddedBackend

            init() { backend = EmbeddedBackend(clock: clock) }

            /// A code-mode `Login` of this session.
            func login(handle: String) -> ViewModelRecorder {
                let recorder = ViewModelRecorder(kind: LoginViewModel.kind, clock: clock, handle: handle)
                recorder.keep(LoginViewModel(args: LoginArgs(mode: .code), context: recorder.context, api: backend, cooldown: cooldown))
                return recorder
            }

            /// A `Login` ("l1") that sent a code to the demo phone just now.
            func loginThatSentACode() async throws -> ViewModelRecorder {
                let first = login(handle: "l1")
                try first.send("phone", .string(Demo.phone))
                try first.execute("sendCode")
                await first.settle()
                return first
            }
        }

        private func advance(_ recorder: ViewModelRecorder, ms: Int) async -> [ViewModelRecorder.Record] {
            await recorder.advance(ms: ms)
            return recorder.take()
        }
    }
}
