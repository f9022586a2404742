@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@testable import Login
extension LoginSuites {
    /// The mode and everything derived from it alone: tab colours, hidden lines and containers.
    @Suite("Login: modes")
    @HostActor
    struct LoginModeTests {
        @Test func passwordModeIsTheDefaultAndCreatingChangesNothing() {
            let harness = LoginHarness()
            #expect(harness.recorder.take() == [])
            let values: [(String, JSON)] = harness.recorder.context.properties.map { ($0.name, $0.json) }
            #expect(values.map(\.0) == [
                "mode", "codeTabColor", "passwordTabColor", "hideCodeLine", "hideCodeContainer", "hidePasswordLine",
                "hidePasswordContainer", "usernameValid", "passwordValid", "phoneValid", "codeValid", "canSubmit",
                "canSendCode", "countdown", "sendCodeTitle", "isSubmitting", "failureMessage",
            ])
            #expect(values.map(\.1) == [
                "password", "#212121", "#1E88E5", true, true, false, false, false, false, false, false, false, false, 0,
                "获取验证码", false, nil,
            ])
        }

        @Test func codeModeFromArgsStartsWithTheCodeTabSelected() {
            let harness = LoginHarness(mode: .code)
            #expect(harness.recorder.take() == [])
            #expect(harness.recorder.value("mode") == "code")
            #expect(harness.recorder.value("codeTabColor") == "#1E88E5")
            #expect(harness.recorder.value("passwordTabColor") == "#212121")
            #expect(harness.recorder.value("hideCodeLine") == false)
            #expect(harness.recorder.value("hideCodeContainer") == false)
            #expect(harness.recorder.value("hidePasswordLine") == true)
            #expect(harness.recorder.value("hidePasswordContainer") == true)
        }

        @Test func switchingModesIsOneInputThatFlipsEveryDerivedOutput() {
            let harness = LoginHarness()
            #expect(harness.send("mode", "code") == [
                changed("mode", "code"),
                changed("codeTabColor", "#1E88E5"),
                changed("passwordTabColor", "#212121"),
                changed("hideCodeLine", false),
                changed("hideCodeContainer", false),
                changed("hidePasswordLine", true),
                changed("hidePasswordContainer", true),
            ])
            // The same mode again: distinctUntilChanged, nothing is sent.
            #expect(harness.send("mode", "code") == [])
            #expect(harness.send("mode", "password") == [
                changed("mode", "password"),
                changed("codeTabColor", "#212121"),
                changed("passwordTabColor", "#1E88E5"),
                changed("hideCodeLine", true),
                changed("hideCodeContainer", true),
                changed("hidePasswordLine", false),
                changed("hidePasswordContainer", false),
            ])
        }

        @Test func canSubmitFollowsTheFieldsOfTheModeShown() {
            let harness = LoginHarness()
            harness.fill([("username", Demo.account), ("password", Demo.password)])
            #expect(harness.recorder.value("canSubmit") == true)
            // The code form is empty: switching to it makes submitting impossible, and back again possible.
            #expect(harness.send("mode", "code") == [
                changed("mode", "code"),
                changed("codeTabColor", "#1E88E5"),
                changed("passwordTabColor", "#212121"),
                changed("hideCodeLine", false),
                changed("hideCodeContainer", false),
                changed("hidePasswordLine", true),
                changed("hidePasswordContainer", true),
                changed("canSubmit", false),
            ])
            #expect(harness.send("mode", "password").last == changed("canSubmit", true))
        }

        @Test(arguments: [
            (JSON.string("sms"), "params.value: must be \"password\" or \"code\""),
            (JSON.string("PASSWORD"), "params.value: must be \"password\" or \"code\""),
            (JSON.int(1), "params.value: expected \"password\" or \"code\", got a number"),
            (JSON.null, "params.value: expected \"password\" or \"code\", got null"),
        ])
        func theModeInputAcceptsOnlyPasswordOrCode(value: JSON, message: String) {
            let harness = LoginHarness()
            switch harness.recorder.send("mode", value) {
            case nil: Issue.record("the mode input accepted \(value)")
            case .invalidValue(let decoding)?: #expect(decoding.description == message)
            case let error?: Issue.record("expected an invalid value, got \(error)")
            }
            #expect(harness.recorder.take() == [])
        }

        @Test func argsAcceptAnAbsentModeAndNameABadOne() throws {
            #expect(try LoginArgs(json: .null, path: "params.args").mode == .password)
            #expect(try LoginArgs(json: ["mode": "code"], path: "params.args").mode == .code)
            #expect(throws: JSONDecodingError(path: "params.args.mode", problem: "must be \"password\" or \"code\"")) {
                try LoginArgs(json: ["mode": "sms"], path: "params.args")
            }
            #expect(throws: JSONDecodingError(path: "params.args.mode", problem: "expected \"password\" or \"code\", got a boolean")) {
                try LoginArgs(json: ["mode": true], path: "params.args")
            }
            #expect(throws: JSONDecodingError.self) { try LoginArgs(json: ["mod": "code"], path: "params.args") }
        }
    }
}
