import Testing
import TodoKinds
import VMHostTesting

/// The app's server in the app's own process through `EmbeddedHost` (docs/Guide-embedding.md):
/// what a Swift shell does, with no process and no C between it and the kinds.
@Suite("Todo app in process")
struct TodoInProcessTests {
    @Test func aShellLoadsTheListThroughEmbeddedHost() async throws {
        let host = try EmbeddedHost(TodoServer.server, arguments: ["--latency-ms", "0"])
        try host.send(message: #"{"jsonrpc":"2.0","id":1,"method":"vm.create","params":{"kind":"TodoList","id":"todos"}}"#)
        try host.send(message: #"{"jsonrpc":"2.0","id":2,"method":"vm.subscribe","params":{"vm":"todos"}}"#)
        try host.send(message: #"{"jsonrpc":"2.0","id":3,"method":"vm.send","params":{"vm":"todos","input":"load"}}"#)
        // The end of input: the load runs to its end first (SPEC §7).
        #expect(await host.close() == 0)
        var messages: [JSON] = []
        for await bytes in host.messages { messages.append(try JSON.parse(bytes)) }
        #expect(messages.last == ["jsonrpc": "2.0", "id": 3, "result": [:]])
        let items = messages.compactMap { $0["params"]?["values"]?["items"] }.last
        #expect(items?.arrayValue?.count == 3)
    }

    @Test func refusedOptionsThrowWhatTheCommandLineWouldSay() {
        #expect(throws: EmbeddedHost.OpenError.self) {
            _ = try EmbeddedHost(TodoServer.server, arguments: ["--latency-ms", "-1"])
        }
    }
}
