import Testing
import TodoKinds
import VMHostTesting

@Suite("TodoList")
@HostActor
struct TodoListTests {
    let api = StubTodoAPI()
    let recorder = ViewModelRecorder(kind: "TodoList")
    let milk = Todo(id: "t1", title: "Buy milk")
    let bank = Todo(id: "t2", title: "Call the bank", done: true)

    init() {
        recorder.keep(TodoListViewModel(args: .init(), context: recorder.context, api: api))
    }

    /// Loads `todos` and asserts the whole history of it.
    func load(_ todos: [Todo]) async throws {
        try recorder.execute("load")
        await recorder.settle()
        try recorder.expect([.changed("loading", true)])
        await api.calls.call(.list, occurrence: api.calls.calls(to: .list).count).succeed(todos)
        await recorder.finished(recorder.outcomes.count - 1)
    }

    @Test func loadShowsTheTodosAndCountsTheOpenOnes() async throws {
        try await load([milk, bank])
        // The call ends (loading drops) before its answer is applied.
        try recorder.expect([
            .changed("loading", false), .changed("items", [milk.json, bank.json]), .changed("remaining", 1),
        ])
        try recorder.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func aFailedLoadChangesNothingAndReportsTheErrorOnce() async throws {
        try recorder.execute("load")
        await recorder.settle()
        let failure = DomainError(kind: .server, code: 503, message: "the todo service is unavailable")
        await api.calls.call(.list).fail(failure)
        #expect(await recorder.finished(0) == .failed(DomainError(kind: .server, code: 503, message: failure.message, input: "load")))
        try recorder.expect([
            .changed("loading", true), .changed("loading", false),
            .event("error", ["kind": "server", "code": 503, "message": "the todo service is unavailable", "input": "load"]),
        ])
        try recorder.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func anEmptyTitleIsRefusedWithItsReasonAndCallsNothing() throws {
        #expect(throws: InputError.refused(path: "params.value", reason: "the title is empty")) {
            try recorder.execute("add", "   ")
        }
        #expect(api.calls.calls.isEmpty)
        try recorder.finish()
    }

    @Test func aTodoNotInTheListIsRefused() async throws {
        try await load([milk])
        _ = recorder.take()
        #expect(recorder.disabledReason("toggle", ["id": "t9"]) == "params.value.id: no todo \"t9\" in the list")
        #expect(recorder.disabledReason("toggle", ["id": ""]) == "params.value.id: must not be empty")
        try recorder.finish()
    }

    @Test func toggleRunsOncePerTodoAndStoresTheAnswer() async throws {
        try await load([milk, bank])
        _ = recorder.take()
        try recorder.execute("toggle", ["id": "t1"])
        await recorder.settle()
        #expect(recorder.disabledReason("toggle", ["id": "t1"]) == "already running for t1")
        #expect(recorder.disabledReason("toggle", ["id": "t2"]) == nil)
        let call = await api.calls.call(.setDone)
        #expect(call.arguments == ["id": "t1", "done": true])
        call.succeed(Todo(id: "t1", title: "Buy milk", done: true))
        await recorder.finished(1)
        try recorder.expect([
            .changed("loading", true), .changed("loading", false),
            .changed("items", [Todo(id: "t1", title: "Buy milk", done: true).json, bank.json]),
            .changed("remaining", 0),
        ])
        try recorder.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func finishFailsOnOutputNobodyAssertedAndOnWorkStillRunning() async throws {
        try recorder.execute("load")
        await recorder.settle()
        let failure = try #require(throws: TestKitFailure.self) { try recorder.finish(also: [api.calls.verifyNothingPending]) }
        #expect(failure.description.contains("output nobody asserted: changed loading = true"))
        #expect(failure.description.contains("commands still running: load"))
        #expect(failure.description.contains("calls still pending: list {}"))
        recorder.context.dispose()
    }

    @Test func editEmitsTheArgsOfAnEditor() async throws {
        try await load([milk])
        _ = recorder.take()
        try recorder.send("edit", ["id": "t1"])
        try recorder.expect([.event("edit", ["id": "t1", "title": "Buy milk", "parent": "vm1"])])
        try recorder.finish()
    }
}
