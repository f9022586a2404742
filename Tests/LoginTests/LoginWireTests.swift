@_spi(Transport) import VMHostCore
import Backend
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@testable import Login
extension LoginSuites {
    /// The Login kind on the wire, through an in-process host over the embedded backend.
    @Suite("Login: on the wire")
    @HostActor
    struct LoginWireTests {
        /// A host serving only `Login` on `clock`, in the reference app's locales: Simplified Chinese
        /// until a client chooses English (each app chooses its default locale; the kit's is English).
        func connection(clock: ManualClock = ManualClock()) -> InProcessConnection {
            InProcessConnection(configuration: .init(
                clock: clock, factories: [LoginViewModel.factory(api: EmbeddedBackend(clock: clock))], testControls: true,
                defaultLocale: .zhHans, locales: AppLocale.referenceApp))
        }

        /// A host serving only `Login` on a manual clock, with a view-model `l` subscribed as `s1`.
        func host(locale: String? = nil, args: JSON? = nil) async -> InProcessConnection {
            let client = connection()
            if let locale { await client.request("initialize", ["locale": .string(locale)]) }
            var create: JSONObject = ["kind": "Login", "id": "l"]
            if let args { create["args"] = args }
            #expect(await client.request("vm.create", .object(create)).result?["vm"] == "l")
            await client.request("vm.subscribe", ["vm": "l"])
            return client
        }

        func send(_ input: String, _ value: JSON? = nil) -> JSON {
            var params: JSONObject = ["vm": "l", "input": .string(input)]
            if let value { params["value"] = value }
            return .object(params)
        }

        @Test func subscribingReturnsEveryPropertyInDeclarationOrder() async {
            let client = connection()
            await client.request("vm.create", ["kind": "Login", "id": "l", "args": ["mode": "code"]])
            let reply = await client.request("vm.subscribe", ["vm": "l"])
            #expect(reply.result?["values"] == [
                "mode": "code", "codeTabColor": "#1E88E5", "passwordTabColor": "#212121",
                "hideCodeLine": false, "hideCodeContainer": false, "hidePasswordLine": true, "hidePasswordContainer": true,
                "usernameValid": false, "passwordValid": false, "phoneValid": false, "codeValid": false,
                "canSubmit": false, "canSendCode": false, "countdown": 0, "sendCodeTitle": "获取验证码",
                "isSubmitting": false, "failureMessage": nil,
            ])
        }

        @Test func badArgsAndModesAreInvalidParamsNamingThem() async {
            let client = connection()
            let badMode = await client.request("vm.create", ["kind": "Login", "args": ["mode": "sms"]])
            #expect(badMode.errorCode == -32602)
            #expect(badMode.error?["message"]?.stringValue?.contains("params.args.mode: must be \"password\" or \"code\"") == true)
            let typo = await client.request("vm.create", ["kind": "Login", "args": ["mod": "code"]])
            #expect(typo.errorCode == -32602)
            #expect(typo.error?["message"]?.stringValue?.contains("params.args.mod") == true)

            let subscribed = await host()
            let mode = await subscribed.request("vm.send", send("mode", "sms"))
            #expect(mode.errorCode == -32602)
            #expect(mode.error?["message"]?.stringValue?.contains("params.value: must be \"password\" or \"code\"") == true)
            #expect(mode.changes.isEmpty)
        }

        @Test func switchingModeIsOneChangedNotification() async {
            let client = await host()
            let reply = await client.request("vm.send", send("mode", "code"))
            #expect(reply.result == [:])
            #expect(reply.changes == [[
                "subscription": "s1", "vm": "l",
                "values": [
                    "mode": "code", "codeTabColor": "#1E88E5", "passwordTabColor": "#212121", "hideCodeLine": false,
                    "hideCodeContainer": false, "hidePasswordLine": true, "hidePasswordContainer": true,
                ],
            ]])
        }

        @Test func aPasswordLoginOnTheWire() async {
            let client = await host()
            #expect(await client.request("vm.send", send("username", "13800138000")).changes.map { $0["values"] } == [["usernameValid": true]])
            #expect(await client.request("vm.send", send("password", "123456")).changes.map { $0["values"] } == [
                ["passwordValid": true, "canSubmit": true],
            ])
            let submit = await client.request("vm.send", send("submit"))
            #expect(submit.result == [:])
            // The turn that started the command, then the turn that ended it; all before the reply.
            #expect(submit.notifications.map { $0["params"] } == [
                ["subscription": "s1", "vm": "l", "values": ["canSubmit": false, "isSubmitting": true]],
                ["subscription": "s1", "vm": "l", "name": "navigate", "value": ["route": "ProductList"]],
                ["subscription": "s1", "vm": "l", "values": ["isSubmitting": false]],
            ])
            #expect(submit.messages.last?["id"] == submit.id)
        }

        @Test func aFailedCodeLoginAnswers32004AfterItsErrorEvent() async {
            let client = await host(args: ["mode": "code"])
            await client.request("vm.send", send("phone", "13912345678"))
            await client.request("vm.send", send("code", "654321"))
            let submit = await client.request("vm.send", send("submit"))
            let error: JSON = [
                "kind": "business", "code": "1003", "message": "验证码错误", "detail": #"the server reported failure code "1003""#,
                "input": "submit",
            ]
            #expect(submit.errorCode == -32004)
            #expect(submit.error?["data"] == error)
            #expect(submit.notifications.map { $0["params"] } == [
                ["subscription": "s1", "vm": "l", "values": ["canSubmit": false, "isSubmitting": true]],
                ["subscription": "s1", "vm": "l", "values": ["failureMessage": "验证码错误", "canSubmit": true, "isSubmitting": false]],
                ["subscription": "s1", "vm": "l", "name": "error", "value": error],
            ])
            // Correcting the code clears the message.
            #expect(await client.request("vm.send", send("code", "123456")).changes.map { $0["values"] } == [["failureMessage": nil]])
            #expect(submit.messages.last?["id"] == submit.id)
        }

        @Test func aDisabledSubmitIs32003ForTheCallerOnly() async {
            let client = await host()
            let submit = await client.request("vm.send", send("submit"))
            #expect(submit.errorCode == -32003)
            #expect(submit.error?["data"] == ["input": "submit", "reason": "the username is not a valid mainland mobile number"])
            #expect(submit.notifications.isEmpty)
        }

        @Test func theCountdownOnTheWireInEnglish() async {
            let client = await host(locale: "en", args: ["mode": "code"])
            #expect(await client.request("vm.get", ["vm": "l", "outputs": ["sendCodeTitle"]]).result == ["values": ["sendCodeTitle": "Get code"]])
            await client.request("vm.send", send("phone", "13912345678"))
            let sent = await client.request("vm.send", send("sendCode"))
            #expect(sent.result == [:])
            #expect(sent.changes.map { $0["values"] } == [["canSendCode": false], ["countdown": 60, "sendCodeTitle": "Resend (60s)"]])
            for seconds in stride(from: 59, through: 1, by: -1) {
                let tick = await client.advance(ms: 1000)
                #expect(tick.changes.map { $0["values"] } == [["countdown": .int(Int64(seconds)), "sendCodeTitle": .string("Resend (\(seconds)s)")]])
            }
            let last = await client.advance(ms: 1000)
            #expect(last.changes.map { $0["values"] } == [["countdown": 0, "sendCodeTitle": "Get code", "canSendCode": true]])
        }

        @Test func disposingDuringTheCountdownStopsIt() async {
            let client = await host(args: ["mode": "code"])
            await client.request("vm.send", send("phone", "13912345678"))
            await client.request("vm.send", send("sendCode"))
            await client.advance(ms: 2000)
            #expect(await client.request("vm.dispose", ["vm": "l"]).result == [:])
            #expect(client.clock.pendingCount == 0)
            #expect(await client.advance(ms: 60_000).notifications.isEmpty)
        }
    }
}
