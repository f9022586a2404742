import Backend
import BackendTesting
import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
import VMHostWire
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
        nonisolated static let kinds: [DomainError] = [
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
        static let earlierFailure = DomainError.business(code: "1001", message: "用户名或密码错误")

        let recorder = ViewModelRecorder(kind: LoginViewModel.kind)
        let api = StubAPI()

        /// A Login view-model in `mode` with that mode's fields filled, its records taken.
        private func open(_ mode: LoginMode) throws -> LoginViewModel {
            let viewModel = recorder.keep(LoginViewModel(args: LoginArgs(mode: mode), context: recorder.context, api: api))
            for (input, text) in Self.fields[mode]! { try recorder.send(input, .string(text)) }
            _ = recorder.take()
            return viewModel
        }

        /// Runs `command` with its call answered by `answer`; returns its outcome.
        @discardableResult
        private func run(_ command: String, _ endpoint: BackendEndpoint, _ answer: Result<StubReply, DomainError>) async throws
            -> CommandOutcome?
        {
            api.answerNext(endpoint, with: answer)
            let index = recorder.outcomes.count
            try recorder.execute(command)
            return await recorder.finished(index)
        }

        /// Every property, by name: what a subscriber's mirror holds.
        private func snapshot() -> [String: JSON] {
            Dictionary(uniqueKeysWithValues: recorder.context.properties.map { ($0.name, $0.json) })
        }

        /// What the user typed, as the view-model holds it (never an output).
        private func typed(_ viewModel: LoginViewModel) -> [String] {
            [viewModel.username.value, viewModel.password.value, viewModel.phone.value, viewModel.code.value]
        }

        @Test(arguments: SubmitPoint.allCases, kinds)
        func aFailedLoginShowsItsMessageAndChangesNothingElse(point: SubmitPoint, error: DomainError) async throws {
            let viewModel = try open(point.mode)
            var concurrent: StubCall?
            switch point {
            case .passwordAfterFailure:
                try await run("submit", point.endpoint, .failure(Self.earlierFailure))
            case .codeDuringCountdown:
                try await run("sendCode", .authSMSCode, .success(.done))
            case .codeDuringSendCode:
                try recorder.execute("sendCode")
                concurrent = await api.call(.authSMSCode)
            case .password, .code:
                break
            }
            _ = recorder.take()
            let before = snapshot()
            let timers = recorder.clock.pendingCount
            let token = api.token

            let index = recorder.outcomes.count
            let occurrence = api.calls(to: point.endpoint).count + 1
            try recorder.execute("submit")
            await api.call(point.endpoint, occurrence: occurrence).fail(error)
            let failure = error.reaching(input: "submit", locale: .zhHans)
            #expect(await recorder.finished(index) == .failed(failure))

            // The attempt clears the last failure; the flag drops, the (user-facing) message shows, one
            // error; the rest is as it was.
            let message = JSON.string(failure.message)
            #expect(recorder.take() == [changed("isSubmitting", true), changed("canSubmit", false)]
                + (before["failureMessage"] == .some(JSON.null) ? [] : [changed("failureMessage", nil)])
                + [changed("failureMessage", message)]
                + [changed("isSubmitting", false), changed("canSubmit", true), event("error", failure.json)])
            var expected = before
            expected["failureMessage"] = message
            #expect(snapshot() == expected)
            #expect(typed(viewModel) == Self.typed[point.mode])
            #expect(api.token == token)
            #expect(recorder.clock.pendingCount == timers)
            #expect(recorder.disabledReason("submit") == nil)

            if let concurrent {
                // The send that ran beside the failed login still ends on its own terms.
                concurrent.succeed(.done)
                await recorder.finished(index - 1)
                #expect(recorder.take() == [changed("countdown", 60), changed("sendCodeTitle", "重新发送(60s)")])
            }
            if recorder.value("countdown") == 60 {
                await recorder.advance(ms: 1000)
                #expect(recorder.take() == [changed("countdown", 59), changed("sendCodeTitle", "重新发送(59s)")])
            }

            // Submitting again, answered: the message goes, the login navigates, and the open
            // session refuses a further submit.
            #expect(try await run("submit", point.endpoint, .success(.session(Session(token: "t-2")))) == .succeeded(nil))
            #expect(recorder.take() == [
                changed("isSubmitting", true), changed("canSubmit", false), changed("failureMessage", nil),
                event("navigate", ["route": "ProductList"]), changed("isSubmitting", false),
            ])
            #expect(recorder.disabledReason("submit") == "the login succeeded already; the session is open")
            #expect(api.token == "t-2")
            #expect(api.pendingCalls.isEmpty)
        }

        @Test(arguments: SendCodePoint.allCases, kinds)
        func aFailedSendStartsNoCountdownAndChangesNothing(point: SendCodePoint, error: DomainError) async throws {
            let viewModel = try open(.code)
            var concurrent: (index: Int, call: StubCall)?
            switch point {
            case .afterCountdown:
                try await run("sendCode", .authSMSCode, .success(.done))
                await recorder.advance(ms: 60_000)
            case .afterFailedLogin:
                try await run("submit", .authLoginCode, .failure(Self.earlierFailure))
            case .duringSubmit:
                try recorder.execute("submit")
                concurrent = (recorder.outcomes.count - 1, await api.call(.authLoginCode))
            case .first:
                break
            }
            _ = recorder.take()
            let before = snapshot()
            #expect(before["countdown"] == 0)
            #expect(before["canSendCode"] == true)
            #expect(recorder.clock.pendingCount == 0)

            let index = recorder.outcomes.count
            let occurrence = api.calls(to: .authSMSCode).count + 1
            try recorder.execute("sendCode")
            let call = await api.call(.authSMSCode, occurrence: occurrence)
            #expect(call.arguments == ["phone": .string(Demo.phone)])
            call.fail(error)
            var failure = error
            failure.input = "sendCode"
            #expect(await recorder.finished(index) == .failed(failure))

            // The button comes back, one error, no countdown; `failureMessage` is a login's only.
            #expect(recorder.take() == [changed("canSendCode", false), changed("canSendCode", true), event("error", failure.json)])
            #expect(snapshot() == before)
            #expect(typed(viewModel) == Self.typed[.code])
            #expect(recorder.clock.pendingCount == 0)
            #expect(recorder.disabledReason("sendCode") == nil)
            await recorder.advance(ms: 1000)
            #expect(recorder.take() == [])

            if let concurrent {
                // The login that ran beside the failed send still ends on its own terms.
                concurrent.call.succeed(.session(Session(token: "t-1")))
                #expect(await recorder.finished(concurrent.index) == .succeeded(nil))
                #expect(recorder.take() == [
                    event("navigate", ["route": "ProductList"]), changed("isSubmitting", false),
                ])
            }

            // Sending again, answered: the countdown starts.
            #expect(try await run("sendCode", .authSMSCode, .success(.done)) == .succeeded(nil))
            #expect(recorder.take() == [
                changed("canSendCode", false), changed("countdown", 60), changed("sendCodeTitle", "重新发送(60s)"),
            ])
            #expect(recorder.disabledReason("sendCode") == "a code was just sent; wait 60s before sending another")
            #expect(api.pendingCalls.isEmpty)
        }
    }
}
