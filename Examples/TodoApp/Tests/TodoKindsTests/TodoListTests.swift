import Testing
import TodoKinds
import VMHostTesting

@Suite("TodoList")
@HostActor
struct TodoListTests {
    let api = StubTodoAPI()
    let milk = Todo(id: "t1", title: "Buy milk")
    let bank = Todo(id: "t2", title: "Call the bank", done: true)

    /// A list loaded with `todos`, its history taken.
    func loaded(_ todos: [Todo]) async -> ViewModelTest<TodoListViewModel> {
        let test = ViewModelTest { TodoListViewModel(args: .init(), api: api) }
        let load = test.send(\.load)
        await api.calls.call(.list).succeed(todos)
        await load.finished()
        _ = test.take()
        return test
    }

    @Test func loadShowsTheTodosAndCountsTheOpenOnes() async {
        let test = ViewModelTest { TodoListViewModel(args: .init(), api: api) }
        let load = test.send(\.load)
        test.expect([.changed(\.loads.loadState, .loading)])
        await test.settle()
        test.expect([.changed(\.$loading, true)])
        await api.calls.call(.list).succeed([milk, bank])
        #expect(await load.finished() == .succeeded(nil))
        // The answer applies, then the run ends: no loading → idle → loaded blip.
        test.expect([
            .changed(\.$items, [milk, bank]), .changed(\.$remaining, 1),
            .changed(\.$loading, false), .changed(\.loads.loadState, .loaded),
        ])
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func aFailedLoadChangesNothingAndReportsTheErrorOnce() async {
        let test = ViewModelTest { TodoListViewModel(args: .init(), api: api) }
        let load = test.send(\.load)
        await api.calls.call(.list).fail(TodoFailure.unavailable)
        let failure = DomainError(
            kind: "unavailable", code: 503, message: "The todo list is unavailable. Try again.",
            detail: "the todo service answered 503", input: "load")
        #expect(await load.finished() == .failed(failure))
        test.expect([
            .changed(\.loads.loadState, .loading), .changed(\.$loading, true), .changed(\.$loading, false),
            .changed(\.loads.lastError, failure), .changed(\.loads.loadState, .failed), .failed(failure),
        ])
        #expect(test.viewModel.items.isEmpty)
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func addAnswersTheTodoItAdded() async {
        let test = await loaded([milk])
        let add = test.send(\.add, " Water the plants ")
        let call = await api.calls.call(.add)
        #expect(call.arguments == ["title": "Water the plants"])
        let plants = Todo(id: "t3", title: "Water the plants")
        call.succeed(plants)
        #expect(await add.finished() == .succeeded(["id": "t3", "title": "Water the plants", "done": false]))
        test.expect([
            .changed(\.$loading, true), .changed(\.$items, [milk, plants]), .changed(\.$remaining, 2), .changed(\.$loading, false),
        ])
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func anEmptyTitleIsRefusedWithItsReasonAndCallsNothing() async {
        let test = ViewModelTest { TodoListViewModel(args: .init(), api: api) }
        #expect(test.send(\.add, "   ").refusal == .refused(path: "params.value", reason: "the title is empty"))
        #expect(api.calls.calls.isEmpty)
        await test.finish()
    }

    @Test func aTodoNotInTheListIsRefused() async {
        let test = await loaded([milk])
        #expect(test.refusal("toggle", ["id": "t9"]) == "params.value.id: no todo \"t9\" in the list")
        #expect(test.refusal("toggle", ["id": ""]) == "params.value.id: must not be empty")
        await test.finish()
    }

    @Test func toggleRunsOncePerTodoAndStoresTheAnswer() async {
        let test = await loaded([milk, bank])
        let toggle = test.send(\.toggle, TodoReference(id: "t1"))
        #expect(test.send(\.toggle, TodoReference(id: "t1")).refusal == .disabled(reason: "already running for t1"))
        #expect(test.refusal("toggle", ["id": "t2"]) == nil)
        let call = await api.calls.call(.setDone)
        #expect(call.arguments == ["id": "t1", "done": true])
        let done = Todo(id: "t1", title: "Buy milk", done: true)
        call.succeed(done)
        await toggle.finished()
        test.expect([.changed(\.$loading, true), .changed(\.$items, [done, bank]), .changed(\.$remaining, 0), .changed(\.$loading, false)])
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func theFilterShowsPartOfTheListAndTheRemainingCountsAll() async {
        let test = await loaded([milk, bank])
        test.set(\.$filter, .done)
        test.expect([.changed(\.$filter, .done), .changed(\.$items, [bank])])
        #expect(test.viewModel.remaining == 1)
        await test.finish()
    }

    @Test func finishFailsOnOutputNobodyAssertedAndOnWorkStillRunning() async {
        let test = ViewModelTest { TodoListViewModel(args: .init(), api: api) }
        test.send(\.load)
        await test.settle()
        await withKnownIssue {
            await test.finish(also: [api.calls.verifyNothingPending])
        } matching: { issue in
            issue.comments.contains {
                $0.rawValue.hasPrefix("TodoList: output nobody asserted: changed loadState = \"loading\"; changed loading = true")
                    || $0.rawValue == "TodoList: still running: load" || $0.rawValue == "TodoList: commands sent with no outcome yet: load"
                    || $0.rawValue == "calls still pending: list {}"
            }
        }
    }

    @Test func editOpensAnEditorWithItsArgs() async {
        let test = await loaded([milk])
        test.fire(\.edit, TodoReference(id: "t1"))
        test.expect([.emitted(\.openEditor, .init(id: "t1", title: "Buy milk", parent: "vm1"))])
        await test.finish()
    }
}
