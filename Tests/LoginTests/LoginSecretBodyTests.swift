import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
import Login

extension LoginSuites {
    /// A login body cut inside its token, or with a bad escape after it: the failure is `decode` and
    /// no message the host writes (the -32004, the `error` event, `failureMessage`, what a trace
    /// would record of them) holds any of the token.
    @Suite("Login: secrets in bodies", .timeLimit(.minutes(1)))
    @HostActor
    struct LoginSecretBodyTests {
        @Test(arguments: [
            #"{"success":true,"code":"0","data":{"token":"TKN-SECRET"#,
            #"{"success":true,"code":"0","data":{"token":"TKN-SECRET\ud800"}}"#,
            #"{"success":true,"code":"0","data":{"token":TKN-SECRET}}"#,
        ])
        func aBadLoginBodyLeavesNoTraceOfItsToken(body: String) async throws {
            let client = InProcessConnection(kinds: [LoginViewModel.factory(api: RawBodyAPI(body))])
            var written: [JSON] = []
            written += await client.request("vm.create", ["kind": "Login", "id": "login"]).messages
            written += await client.request("vm.subscribe", ["vm": "login"]).messages
            written += await client.request("vm.send", ["vm": "login", "input": "username", "value": "13800138000"]).messages
            written += await client.request("vm.send", ["vm": "login", "input": "password", "value": "123456"]).messages
            let submit = await client.request("vm.send", ["vm": "login", "input": "submit"])
            written += submit.messages
            written += await client.request("vm.get", ["vm": "login"]).messages
            #expect(submit.errorCode == -32004)
            #expect(submit.error?["data"]?["kind"] == "decode")
            #expect(submit.events.contains { $0["name"] == "error" })
            #expect(submit.changes.contains { $0["values"]?["failureMessage"] != nil })
            let text = written.map(\.description).joined(separator: "\n")
            #expect(!text.contains("SECRET") && !text.contains("TKN"))
        }
    }
}
