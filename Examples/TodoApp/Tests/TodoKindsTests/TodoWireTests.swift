import Foundation
import Testing
import TodoKinds
import VMHostTesting

/// The app's whole server (its options, kinds and error kinds, as `todo-host` serves them) on the
/// in-memory backend with its latency on the host's manual clock: in process, or, with
/// `VMHOST_TEST_BINARY=.build/debug/todo-host`, the built executable over stdio (the same tests).
@Suite("Todo app on the wire")
@HostActor
struct TodoWireTests {
    let client: any HostConnection

    init() throws {
        client = try HostConnections.connect(server: TodoServer.server, arguments: ["--latency-ms", "200"])
    }

    @Test func everyKindKeepsWhatItDescribes() {
        let backend = InMemoryTodoBackend(clock: ManualClock())
        #expect(DescribedKindCheck.problems(kinds: [TodoListViewModel.factory(api: backend), TodoEditorViewModel.factory(api: backend)]) == [])
    }

    @Test(.disabled(if: ProcessInfo.processInfo.environment[HostConnections.binaryVariable] != nil, "in process only"))
    func aBadOptionIsTheUsageErrorOfTheCommandLine() {
        #expect(throws: UsageError("--latency-ms and --fail-every must not be negative")) {
            try InProcessConnection(server: TodoServer.server, arguments: ["--latency-ms", "-1"])
        }
    }

    @Test func aSavedEditorReloadsItsList() async throws {
        await client.request("vm.create", ["kind": "TodoList", "id": "list"])
        await client.request("vm.subscribe", ["vm": "list", "outputs": ["items", "loading", "openEditor"]])
        let load = await client.start("vm.send", ["vm": "list", "input": "load"], id: "load")
        #expect(load.map { $0["params"]?["values"] } == [["loading": true]])
        let loaded = await client.advance(ms: 200)
        #expect(loaded.messages.first?["params"]?["values"]?["items"]?.arrayValue?.count == 3)
        #expect(loaded.messages.contains { $0["id"] == "load" && $0["result"] == [:] })

        let edit = await client.request("vm.send", ["vm": "list", "input": "edit", "value": ["id": "t1"]])
        let args = try #require(edit.events.first?["value"])
        #expect(args == ["id": "t1", "title": "Buy milk", "parent": "list"])
        await client.request("vm.create", ["kind": "TodoEditor", "args": args, "id": "editor"])
        let unchanged = await client.request("vm.send", ["vm": "editor", "input": "save"])
        #expect(unchanged.errorCode == -32003)
        #expect(unchanged.error?["data"]?["reason"] == "the title is unchanged")
        await client.request("vm.send", ["vm": "editor", "input": "title", "value": "Buy oat milk"])
        await client.start("vm.send", ["vm": "editor", "input": "save"], id: "save")
        let saved = await client.advance(ms: 200)
        #expect(saved.messages.contains { $0["id"] == "save" && $0["result"]?["value"]?["title"] == "Buy oat milk" })
        let reloaded = await client.advance(ms: 200)
        let items = reloaded.changes.compactMap { $0["values"]?["items"] }.last
        #expect(items?.arrayValue?.first?["title"] == "Buy oat milk")
        await client.finish()
    }

    @Test func theErrorEventListsTheAppsOwnKinds() async {
        let described = await client.request("host.describe", ["kind": "TodoList"])
        let error = described.result?["kinds"]?.arrayValue?.first?["outputs"]?.arrayValue?.first { $0["name"] == "error" }
        #expect(error?["schema"]?["properties"]?["kind"] == ["enum": ["unavailable", "notFound"]])
        let add = described.result?["kinds"]?.arrayValue?.first?["inputs"]?.arrayValue?.first { $0["name"] == "add" }
        #expect(add?["result"] == [
            "type": "object", "properties": ["id": ["type": "string"], "title": ["type": "string"], "done": ["type": "boolean"]],
            "required": ["id", "title", "done"], "additionalProperties": false,
        ])
    }

    @Test func argsAreDescribedAndReadFromOneDeclaration() async {
        let described = await client.request("host.describe", ["kind": "TodoEditor"])
        #expect(described.result?["kinds"]?.arrayValue?.first?["args"] == [
            "type": "object",
            "properties": ["id": ["type": "string", "minLength": 1], "title": ["type": "string"], "parent": ["type": "string"]],
            "required": ["id", "title"], "additionalProperties": false,
        ])
        let refusals: [(JSON, String)] = [
            (["kind": "TodoEditor", "args": ["id": "", "title": "x"]], "params.args.id: must not be empty"),
            (["kind": "TodoEditor", "args": ["id": "t1"]], "params.args.title: is required (a string)"),
            (["kind": "TodoEditor", "args": ["id": "t1", "title": "x", "list": "l"]],
             "params.args.list: is not a known member (expected one of: id, parent, title)"),
            (["kind": "TodoList", "args": ["filter": "later"]], #"params.args.filter: must be "all", "open" or "done""#),
            (["kind": "TodoList", "args": ["filter": 1]], #"params.args.filter: expected "all", "open" or "done", got a number"#),
        ]
        for (params, message) in refusals {
            let reply = await client.request("vm.create", params)
            #expect(reply.errorCode == -32602)
            #expect(reply.error?["message"] == .string("Invalid params: \(message)"))
        }
    }

    @Test func aRefusedIdIsInvalidParams() async {
        await client.request("vm.create", ["kind": "TodoList", "id": "list"])
        let reply = await client.request("vm.send", ["vm": "list", "input": "delete", "value": ["id": "t9"]])
        #expect(reply.errorCode == -32602)
        #expect(reply.error?["message"] == "Invalid params: params.value.id: no todo \"t9\" in the list")
    }
}
