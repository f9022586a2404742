import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@testable import Login

extension LoginSuites {
    /// Every error kind at every point where `submit` (both modes) and `sendCode` call the backend,
    /// with and without earlier successes, on a ``StubAPI`` that fails exactly the call under test:
    /// the flag drops, one `error` reports it (and `failureMessage` shows it, for a login), nothing
    /// typed or derived changes, a countdown keeps running, and the command run again against a
    /// backend that answers recovers fully.
    @Suite("Login: fault matrix", .timeLimit(.minutes(1)))
    @HostActor
    struct LoginFaultMatrixTests {
        /// One failure of each kind.
        nonisolated static let kinds: [BackendError] = [
            .network("could not connect to the server"),
            .timeout(),
            .server(status: 503),
            .business(code: "1009", message: "系统繁忙"),
            .decode("session.token is missing"),
        ]

        /// Where a failing login comes.
        enum SubmitPoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
            /// Password mode, the first attempt.
            case password
            /// Password mode, while the message of an earlier failed login is shown.
            case passwordAfterFailure
            /// Code mode, the first attempt.
            case code
            /// Code mode, a code was just sent: the countdown runs.
            case codeDuringCountdown
            /// Code mode, while a `sendCode` is in flight (it succeeds afterwards).
            case codeDuringSendCode

            var testDescription: String { rawValue }
            var mode: LoginMode { rawValue.hasPrefix("password") ? .password : .code }
            var endpoint: BackendEndpoint { mode == .password ? .authLogin : .authLoginCode }
        }

        /// Where a failing `sendCode` comes.
        enum SendCodePoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
            /// The first code asked for.
            case first
            /// A code was sent before and its countdown ran out.
            case afterCountdown
            /// The message of a failed login is shown: a failed send does not replace it.
            case afterFailedLogin
            /// A login is in flight (it succeeds afterwards).
            case duringSubmit

            var testDescription: String { rawValue }
        }

        /// The fields each mode's form is filled with.
        static let fields: [LoginMode: [(String, String)]] = [
            .password: [("username", Demo.account), ("password", Demo.password)],
            .code: [("phone", Demo.phone), ("code", Demo.code)],
        ]
        /// The username, password, phone and code as typed by ``open(_:)``.
        static let typed: [LoginMode: [String]] = [
            .password: [Demo.account, Demo.password, "", ""],
            .code: ["", "", Demo.phone, Demo.code],
        ]
        /// A login failure shown before the fault under test.
        static let earlierFailure = BackendError.business(code: "1001", message: "用户名或密码错误")

        let api = StubAPI()

        /// A Login view-model in `mode` with that mode's fields filled, its records taken.
        private func open(_ mode: LoginMode) -> ViewModelTest<LoginViewModel> {
            let test = ViewModelTest(locale: .zhHans) { LoginViewModel(args: LoginArgs(mode: mode), api: api) }
            for (input, text) in Self.fields[mode]! { #expect(test.send(input, .string(text)) == nil) }
            _ = test.take()
            return test
        }

        /// Runs `command` with its call answered by `answer`; returns its outcome.
        @discardableResult
        private func run(
            _ test: ViewModelTest<LoginViewModel>, _ command: String, _ endpoint: BackendEndpoint, _ answer: Result<StubReply, BackendError>
        ) async -> CommandOutcome? {
            api.answerNext(endpoint, with: answer)
            return await test.execute(command).accepted().finished()
        }

        /// Every property, by name: what a subscriber's mirror holds.
        private func snapshot(_ test: ViewModelTest<LoginViewModel>) -> [String: JSON] {
            Dictionary(uniqueKeysWithValues: test.context.properties.map { ($0.name, $0.json) })
        }

        /// What the user typed, as the view-model holds it (never an output).
        private func typed(_ viewModel: LoginViewModel) -> [String] {
            [viewModel.username, viewModel.password, viewModel.phone, viewModel.code]
        }

        @Test(arguments: SubmitPoint.allCases, kinds)
        func aFailedLoginShowsItsMessageAndChangesNothingElse(point: SubmitPoint, error: BackendError) async {
            let test = open(point.mode)
            var concurrent: (run: CommandRun, call: StubCall)?
            switch point {
            case .passwordAfterFailure:
                await run(test, "submit", point.endpoint, .failure(Self.earlierFailure))
            case .codeDuringCountdown:
                await run(test, "sendCode", .authSMSCode, .success(.done))
            case .codeDuringSendCode:
                let send = test.execute("sendCode").accepted()
                concurrent = (send, await api.call(.authSMSCode))
            case .password, .code:
                break
            }
            _ = test.take()
            let before = snapshot(test)
            let timers = test.clock.pendingCount
            let token = api.token

            let occurrence = api.calls(to: point.endpoint).count + 1
            let submit = test.execute("submit").accepted()
            await api.call(point.endpoint, occurrence: occurrence).fail(error)
            let failure = domainError(error, input: "submit")
            #expect(await submit.finished() == .failed(failure))

            // The attempt clears the last failure; the flag drops, the (user-facing) message shows, one
            // error; the rest is as it was.
            let message = JSON.string(failure.message)
            #expect(test.take() == [changed("canSubmit", false), changed("isSubmitting", true)]
                + (before["failureMessage"] == .some(JSON.null) ? [] : [changed("failureMessage", nil)])
                + [changed("failureMessage", message)]
                + [changed("canSubmit", true), changed("isSubmitting", false), event("error", failure.json)])
            var expected = before
            expected["failureMessage"] = message
            #expect(snapshot(test) == expected)
            #expect(typed(test.viewModel) == Self.typed[point.mode])
            #expect(api.token == token)
            #expect(test.clock.pendingCount == timers)
            #expect(test.refusal("submit") == nil)

            if let concurrent {
                // The send that ran beside the failed login still ends on its own terms.
                concurrent.call.succeed(.done)
                await concurrent.run.finished()
                #expect(test.take() == [changed("countdown", 60), changed("sendCodeTitle", "重新发送(60s)")])
            }
            if test.value("countdown") == 60 {
                await test.advance(ms: 1000)
                #expect(test.take() == [changed("countdown", 59), changed("sendCodeTitle", "重新发送(59s)")])
            }

            // Submitting again, answered: the message goes, the login navigates, and the open
            // session refuses a further submit.
            #expect(await run(test, "submit", point.endpoint, .success(.session(Session(token: "t-2")))) == .succeeded(nil))
            #expect(test.take() == [
                changed("canSubmit", false), changed("isSubmitting", true), changed("failureMessage", nil),
                event("navigate", ["route": "ProductList"]), changed("isSubmitting", false),
            ])
            #expect(test.refusal("submit") == "the login succeeded already; the session is open")
            #expect(api.token == "t-2")
            #expect(api.pendingCalls.isEmpty)
        }

        @Test(arguments: SendCodePoint.allCases, kinds)
        func aFailedSendStartsNoCountdownAndChangesNothing(point: SendCodePoint, error: BackendError) async {
            let test = open(.code)
            var concurrent: (run: CommandRun, call: StubCall)?
            switch point {
            case .afterCountdown:
                await run(test, "sendCode", .authSMSCode, .success(.done))
                await test.advance(ms: 60_000)
            case .afterFailedLogin:
                await run(test, "submit", .authLoginCode, .failure(Self.earlierFailure))
            case .duringSubmit:
                let submit = test.execute("submit").accepted()
                concurrent = (submit, await api.call(.authLoginCode))
            case .first:
                break
            }
            _ = test.take()
            let before = snapshot(test)
            #expect(before["countdown"] == 0)
            #expect(before["canSendCode"] == true)
            #expect(test.clock.pendingCount == 0)

            let occurrence = api.calls(to: .authSMSCode).count + 1
            let send = test.execute("sendCode").accepted()
            let call = await api.call(.authSMSCode, occurrence: occurrence)
            #expect(call.arguments == ["phone": .string(Demo.phone)])
            call.fail(error)
            let failure = domainError(error, input: "sendCode")
            #expect(await send.finished() == .failed(failure))

            // The button comes back, one error, no countdown; `failureMessage` is a login's only.
            #expect(test.take() == [changed("canSendCode", false), changed("canSendCode", true), event("error", failure.json)])
            #expect(snapshot(test) == before)
            #expect(typed(test.viewModel) == Self.typed[.code])
            #expect(test.clock.pendingCount == 0)
            #expect(test.refusal("sendCode") == nil)
            await test.advance(ms: 1000)
            #expect(test.take() == [])

            if let concurrent {
                // The login that ran beside the failed send still ends on its own terms.
                concurrent.call.succeed(.session(Session(token: "t-1")))
                #expect(await concurrent.run.finished() == .succeeded(nil))
                #expect(test.take() == [
                    event("navigate", ["route": "ProductList"]), changed("isSubmitting", false),
                ])
            }

            // Sending again, answered: the countdown starts.
            #expect(await run(test, "sendCode", .authSMSCode, .success(.done)) == .succeeded(nil))
            #expect(test.take() == [
                changed("canSendCode", false), changed("countdown", 60), changed("sendCodeTitle", "重新发送(60s)"),
            ])
            #expect(test.refusal("sendCode") == "a code was just sent; wait 60s before sending another")
            #expect(api.pendingCalls.isEmpty)
        }
    }
}
