import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
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
            // ASCII is read byte by byte, everything else scalar by scalar: the same rules.
            ("\t139\n1234\r5678\u{B}\u{C}", "13912345678"), ("+86", ""), ("86", "86"), ("8613912345678 ", "13912345678"),
            ("+8613912345678\u{A0}", "13912345678"), ("\u{85}+86-139", "139"), ("139_1234", "139_1234"),
        ])
        func aPhoneIsNormalizedAsTyped(typed: String, normalized: String) {
            #expect(LoginValidation.normalizedMobileNumber(typed) == normalized)
        }

        @Test func theServerGetsTheNormalizedNumbers() async {
            let api = StubAPI()
            let test = ViewModelTest(locale: .zhHans) { LoginViewModel(args: LoginArgs(mode: .code), api: api) }
            #expect(test.send("phone", "+86 139-1234-5678") == nil)
            #expect(test.value("phoneValid") == true)
            api.answerNext(.authSMSCode, with: .success(.done))
            await test.execute("sendCode").accepted().finished()
            #expect(test.send("code", "123456") == nil)
            api.answerNext(.authLoginCode, with: .success(.session(Session(token: "t"))))
            await test.execute("submit").accepted().finished()
            // The session is open: a new Login logs in with the password.
            let second = ViewModelTest(locale: .zhHans, clock: test.clock, handle: "vm2") {
                LoginViewModel(args: LoginArgs(mode: .password), api: api)
            }
            #expect(second.send("username", "１３８ ００１３ ８０００") == nil)
            #expect(second.send("password", "123456") == nil)
            api.answerNext(.authLogin, with: .success(.session(Session(token: "t"))))
            await second.execute("submit").accepted().finished()
            #expect(api.calls(to: .authSMSCode).map(\.arguments) == [["phone": "13912345678"]])
            #expect(api.calls(to: .authLoginCode).first?.arguments["phone"] == "13912345678")
            #expect(api.calls(to: .authLogin).first?.arguments["username"] == "13800138000")
        }

        @Test func aNewAttemptClearsTheLastFailureAsItStarts() async {
            let harness = LoginHarness()
            harness.fill([("username", Demo.account), ("password", "654321")])
            harness.execute("submit")
            await harness.recorder.settle()
            #expect(harness.recorder.value("failureMessage") == "用户名或密码错误")
            _ = harness.recorder.take()
            // The same fields again (nothing typed): the message goes when the attempt starts.
            harness.backend.latency = .milliseconds(100)
            harness.execute("submit")
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [
                changed("canSubmit", false), changed("isSubmitting", true), changed("failureMessage", nil),
            ])
            await harness.recorder.advance(ms: 100)
            #expect(harness.recorder.take() == [
                changed("failureMessage", "用户名或密码错误"), changed("canSubmit", true), changed("isSubmitting", false),
                event("error", domainError(.business(code: "1001", message: "用户名或密码错误"), input: "submit").json),
            ])
        }

        @Test func anEnglishLoginShowsTheFriendlyTextOfATransportFailure() async {
            let harness = LoginHarness(locale: .en)
            harness.fill([("username", Demo.account), ("password", Demo.password)])
            harness.backend.script(.authLogin, [.network])
            harness.execute("submit")
            await harness.recorder.settle()
            #expect(harness.recorder.value("failureMessage") == "No connection. Check your network and try again.")
        }

        /// Two `Login`s of one app session (one host): the second, opened while the first one's
        /// countdown runs, does not allow an immediate resend to the same phone.
        @Test func reopeningLoginKeepsTheCountdownOfThePhone() async {
            let session = AppSession()
            let first = await session.loginThatSentACode()
            #expect(first.value("countdown") == 60)
            await first.advance(ms: 20_500)
            first.context.dispose()

            let second = session.login(handle: "l2")
            // Typed differently, the same phone: 39.5 s are left, shown as 40.
            #expect(second.send("phone", "139 1234 5678") == nil)
            #expect(second.take() == [
                changed("countdown", 40), changed("sendCodeTitle", "重新发送(40s)"), changed("phoneValid", true),
            ])
            #expect(second.value("canSendCode") == false)
            #expect(second.execute("sendCode").refusal == .disabled(reason: "a code was just sent; wait 40s before sending another"))
            // The first tick comes when the shown second is over, then one per second.
            #expect(await advance(second, ms: 499) == [])
            #expect(await advance(second, ms: 1) == [changed("countdown", 39), changed("sendCodeTitle", "重新发送(39s)")])
            #expect(await advance(second, ms: 39_000) .last == changed("canSendCode", true))
            #expect(second.value("countdown") == 0)
            second.execute("sendCode").accepted()
            await second.settle()
            #expect(second.value("countdown") == 60)
        }

        @Test func anotherPhoneIsNotHeldBack() async {
            let session = AppSession()
            _ = await session.loginThatSentACode()
            let second = session.login(handle: "l2")
            #expect(second.send("phone", "13800138000") == nil)
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
            func login(handle: String) -> ViewModelTest<LoginViewModel> {
                ViewModelTest(locale: .zhHans, clock: clock, handle: handle) {
                    LoginViewModel(args: LoginArgs(mode: .code), api: backend, cooldown: cooldown)
                }
            }

            /// A `Login` ("l1") that sent a code to the demo phone just now.
            func loginThatSentACode() async -> ViewModelTest<LoginViewModel> {
                let first = login(handle: "l1")
                #expect(first.send("phone", .string(Demo.phone)) == nil)
                first.execute("sendCode").accepted()
                await first.settle()
                return first
            }
        }

        private func advance(_ recorder: ViewModelTest<LoginViewModel>, ms: Int) async -> [LoginRecord] {
            await recorder.advance(ms: ms)
            return recorder.take()
        }
    }
}
