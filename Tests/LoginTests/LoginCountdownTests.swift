import Backend
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@testable import Login
extension LoginSuites {
    /// `sendCode` and the 60-second countdown on a manual clock.
    @Suite("Login: send code and countdown")
    @HostActor
    struct LoginCountdownTests {
        /// A code-mode harness with a valid phone, its history taken.
        func ready(locale: AppLocale = .zhHans) -> LoginHarness {
            let harness = LoginHarness(mode: .code, locale: locale)
            #expect(harness.send("phone", .string(Demo.phone)) == [changed("phoneValid", true), changed("canSendCode", true)])
            return harness
        }

        @Test func theCountdownRunsFrom60To0OneTickPerSecond() async {
            let harness = ready()
            let send = harness.execute("sendCode")
            // Sending disables the button at once; the countdown starts when the backend said yes.
            #expect(harness.recorder.take() == [changed("canSendCode", false)])
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [changed("countdown", 60), changed("sendCodeTitle", "重新发送(60s)")])
            #expect(send.outcome == .succeeded(nil))
            #expect(harness.backend.queuedOutcomes(for: .authSMSCode).isEmpty)

            // Nothing happens before a whole second has passed.
            #expect(await harness.advance(ms: 999) == [])
            #expect(await harness.advance(ms: 1) == [changed("countdown", 59), changed("sendCodeTitle", "重新发送(59s)")])
            for seconds in stride(from: 58, through: 1, by: -1) {
                #expect(await harness.advance(ms: 1000) == [
                    changed("countdown", .int(Int64(seconds))), changed("sendCodeTitle", .string("重新发送(\(seconds)s)")),
                ])
            }
            #expect(await harness.advance(ms: 1000) == [
                changed("countdown", 0), changed("sendCodeTitle", "获取验证码"), changed("canSendCode", true),
            ])
            // The countdown is over: no timer is left, time passing changes nothing.
            #expect(harness.recorder.clock.pendingCount == 0)
            #expect(await harness.advance(ms: 10_000) == [])
        }

        @Test func aLongAdvanceFiresEveryTickInOrder() async {
            let harness = ready()
            harness.execute("sendCode")
            await harness.recorder.settle()
            _ = harness.recorder.take()
            let records = await harness.advance(ms: 60_000)
            var expected: [LoginRecord] = []
            for seconds in stride(from: 59, through: 1, by: -1) {
                expected += [changed("countdown", .int(Int64(seconds))), changed("sendCodeTitle", .string("重新发送(\(seconds)s)"))]
            }
            expected += [changed("countdown", 0), changed("sendCodeTitle", "获取验证码"), changed("canSendCode", true)]
            #expect(records == expected)
        }

        @Test func sendingIsRefusedDuringTheCountdownWithTheSecondsLeft() async {
            let harness = ready()
            harness.execute("sendCode")
            await harness.recorder.settle()
            _ = await harness.advance(ms: 5000)
            // An outcome left in the queue proves the refused send made no call.
            harness.backend.script(.authSMSCode, [.network])
            #expect(harness.recorder.execute("sendCode").refusal == .disabled(reason: "a code was just sent; wait 55s before sending another"))
            #expect(harness.recorder.take() == [])
            #expect(harness.backend.queuedOutcomes(for: .authSMSCode) == [.network])
        }

        @Test func sendingIsRefusedWithoutAValidPhoneAndWhileASendRuns() async {
            let harness = LoginHarness(mode: .code)
            #expect(harness.recorder.execute("sendCode").refusal == .disabled(reason: "the phone number is not a valid mainland mobile number"))
            _ = harness.send("phone", .string(Demo.phone))
            harness.backend.latency = .milliseconds(500)
            harness.execute("sendCode")
            #expect(harness.recorder.execute("sendCode").refusal == .disabled(reason: "already running"))
            #expect(harness.recorder.take() == [changed("canSendCode", false)])
            #expect(await harness.advance(ms: 500) == [changed("countdown", 60), changed("sendCodeTitle", "重新发送(60s)")])
        }

        @Test func aFailedSendEmitsErrorAndStartsNoCountdown() async {
            let harness = ready()
            harness.backend.script(.authSMSCode, [.network])
            let send = harness.execute("sendCode")
            await harness.recorder.settle()
            let error = domainError(.network("could not connect to the server"), input: "sendCode")
            #expect(harness.recorder.take() == [
                changed("canSendCode", false),
                changed("canSendCode", true),
                event("error", error.json),
            ])
            #expect(send.outcome == .failed(error))
            #expect(harness.recorder.value("countdown") == 0)
            #expect(harness.recorder.clock.pendingCount == 0)
            // A business refusal is an error too, with the server's code and message.
            harness.backend.script(.authSMSCode, [.business(code: "1009", message: "发送太频繁")])
            harness.execute("sendCode")
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [
                changed("canSendCode", false),
                changed("canSendCode", true),
                event("error", [
                    "kind": "business", "code": "1009", "message": "发送太频繁", "detail": #"the server reported failure code "1009""#,
                    "input": "sendCode",
                ]),
            ])
        }

        @Test func disposingStopsTheTimer() async {
            let harness = ready()
            harness.execute("sendCode")
            await harness.recorder.settle()
            _ = await harness.advance(ms: 3000)
            #expect(harness.recorder.value("countdown") == 57)
            harness.recorder.context.dispose()
            #expect(harness.recorder.clock.pendingCount == 0)
            #expect(await harness.advance(ms: 60_000) == [])
            #expect(harness.recorder.value("countdown") == 57)
        }

        @Test func englishTitles() async {
            let harness = ready(locale: .en)
            #expect(harness.recorder.value("sendCodeTitle") == "Get code")
            harness.execute("sendCode")
            await harness.recorder.settle()
            #expect(harness.recorder.take() == [
                changed("canSendCode", false), changed("countdown", 60), changed("sendCodeTitle", "Resend (60s)"),
            ])
            #expect(await harness.advance(ms: 1000) == [changed("countdown", 59), changed("sendCodeTitle", "Resend (59s)")])
            #expect(await harness.advance(ms: 59_000).suffix(3) == [
                changed("countdown", 0), changed("sendCodeTitle", "Get code"), changed("canSendCode", true),
            ])
        }

        @Test func theCountdownDoesNotBlockTheLogin() async {
            let harness = ready()
            harness.execute("sendCode")
            await harness.recorder.settle()
            _ = harness.recorder.take()
            #expect(harness.send("code", .string(Demo.code)) == [changed("codeValid", true), changed("canSubmit", true)])
        }
    }
}
