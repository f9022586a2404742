import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import MenuGroups
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire

/// Every error kind at every point where `MenuSubGroup` (`load`, `delete`, the reload an editor
/// starts) and `MenuEditGroup` (`save`, creating and renaming) call the backend, with and without
/// earlier successes and with other requests of the view-model in flight: `loading` / `isSaving`
/// drop once nothing runs, one `error` reports the failure on the view-model whose request failed,
/// the last good `groups` and the typed name stay, and the command run again against a backend that
/// answers recovers fully. Also: a load answered before a delete it overlapped does not put the
/// deleted row back.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuFaultMatrixTests {
    /// One failure of each kind.
    nonisolated static let kinds: [BackendError] = [
        .network("could not connect to the server"),
        .timeout(),
        .server(status: 503),
        .business(code: "3001", message: "菜单已锁定"),
        .decode("data[0].dishCount is missing"),
    ]

    /// Where a failing `load` comes.
    enum LoadPoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The first load (call 1): nothing to keep but the empty start.
        case first
        /// The demo groups are listed (call 2).
        case reload
        /// A load succeeded with no group: `isEmpty` is true (call 2).
        case reloadEmpty
        /// The groups are listed and g2 was deleted since (call 2).
        case reloadAfterDelete
        /// The groups are listed and the delete of g2 is in flight; it succeeds afterwards (call 2).
        case duringDelete

        var testDescription: String { rawValue }
    }

    /// Where a failing `delete {groupId: "g2"}` comes; the demo groups are always listed first.
    enum DeletePoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The first delete (call 1).
        case first
        /// g1 was deleted before (call 2).
        case afterDelete
        /// A load is in flight; it succeeds afterwards.
        case duringLoad
        /// The delete of g1 is in flight; it succeeds afterwards (call 2).
        case besideDelete

        var testDescription: String { rawValue }
    }

    /// Where a failing `save` comes; its parent `MenuSubGroup` lists the demo groups.
    enum SavePoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Creating a group.
        case create
        /// Renaming g2.
        case rename
        /// Creating, after a first save failed already (call 2).
        case createRetry
        /// Creating while the parent's load is in flight: the failed save leaves that load alone.
        case createDuringParentLoad

        var testDescription: String { rawValue }
        var isRename: Bool { self == .rename }
    }

    static let demo = Fixtures.demo
    static let created = MenuGroup(id: "g5", name: "特色小炒", dishCount: 0)
    static let renamed = MenuGroup(id: "g2", name: "凉菜", dishCount: 8)

    let api = StubAPI()
    /// A `MenuSubGroup` on menu `m1` (handle `groups1`) that has not loaded yet.
    let test: SubGroupTest

    init() {
        test = .subGroup(api: api, handle: "groups1")
    }

    // MARK: Helpers

    /// Runs `command` on `test` (the `MenuSubGroup` unless given) with its call answered by
    /// `answer`; returns its outcome.
    @discardableResult
    private func run(
        _ command: String, _ value: JSON = .null, answering endpoint: BackendEndpoint, with answer: Result<StubReply, BackendError>
    ) async -> CommandOutcome? {
        await run(command, value, on: test, answering: endpoint, with: answer)
    }

    @discardableResult
    private func run<VM>(
        _ command: String, _ value: JSON = .null, on test: ViewModelTest<VM>,
        answering endpoint: BackendEndpoint, with answer: Result<StubReply, BackendError>
    ) async -> CommandOutcome? {
        api.answerNext(endpoint, with: answer)
        return await test.execute(command, value).finished()
    }

    /// Starts `command` and waits for its backend call, left pending.
    private func start(_ command: String, _ value: JSON = .null, calling endpoint: BackendEndpoint) async
        -> (run: CommandRun, call: StubCall)
    {
        let occurrence = api.calls(to: endpoint).count + 1
        let run = test.execute(command, value)
        return (run, await api.call(endpoint, occurrence: occurrence))
    }

    /// The named properties of `test`, as a subscriber's mirror holds them.
    private func snapshot<VM>(_ names: [String], of test: ViewModelTest<VM>) -> [String: JSON] {
        Dictionary(uniqueKeysWithValues: names.map { ($0, test.value($0) ?? nil) })
    }

    private func groupsSnapshot() -> [String: JSON] { snapshot(["groups", "isEmpty", "loading"], of: test) }

    /// The failure as `error` and -32004 carry it.
    private func failure(_ error: BackendError, input: String) -> DomainError {
        Fixtures.failure(error, input: input)
    }

    /// Whether `records` hold an event (`error`, `navigate`) of `test`.
    private func hasEvents<VM>(_ records: [ViewModelTest<VM>.Record], of test: ViewModelTest<VM>) -> Bool {
        let events = test.context.events.map(\.name)
        return records.contains { events.contains($0.outputName) }
    }

    // MARK: MenuSubGroup.load

    @Test(arguments: LoadPoint.allCases, kinds)
    func aFailedLoadKeepsTheLastGoodGroupsAndTheNextOneRecovers(point: LoadPoint, error: BackendError) async {
        var server = Self.demo
        var concurrent: (run: CommandRun, call: StubCall)?
        switch point {
        case .first:
            break
        case .reload:
            await run("load", answering: .groupsList, with: .success(.demoGroups))
        case .reloadEmpty:
            server = []
            await run("load", answering: .groupsList, with: .success(.groups([])))
        case .reloadAfterDelete:
            await run("load", answering: .groupsList, with: .success(.demoGroups))
            await run("delete", ["groupId": "g2"], answering: .groupsDelete, with: .success(.done))
            server.removeAll { $0.id == "g2" }
        case .duringDelete:
            await run("load", answering: .groupsList, with: .success(.demoGroups))
            concurrent = await start("delete", ["groupId": "g2"], calling: .groupsDelete)
            server.removeAll { $0.id == "g2" }
        }
        _ = test.take()
        let before = groupsSnapshot()

        let (load, call) = await start("load", calling: .groupsList)
        call.fail(error)
        #expect(await load.finished() == .failed(failure(error, input: "load")))

        // One error; `loading` stays up only while the other request runs; no row changed; the load
        // state says `failed` with the error until a load succeeds.
        let loading: [SubGroupTest.Record] = concurrent == nil ? [.changed("loading", true), .changed("loading", false)] : []
        test.expect([.changed("loadState", "loading")] + loading + [
            .changed("lastError", Fixtures.error(error, input: "load")), .changed("loadState", "failed"),
            .event("error", Fixtures.error(error, input: "load")),
        ])
        #expect(groupsSnapshot() == before)
        if let concurrent {
            concurrent.call.succeed(.done)
            #expect(await concurrent.run.finished() == .succeeded(nil))
            test.expect([.changed("groups", Fixtures.rows(server)), .changed("loading", false)])
        }
        #expect(test.value("loading") == false)

        // Loading again, answered: the server's list is shown.
        #expect(await run("load", answering: .groupsList, with: .success(.groups(server))) == .succeeded(nil))
        #expect(!hasEvents(test.take(), of: test))
        #expect(groupsSnapshot() == ["groups": Fixtures.rows(server), "isEmpty": .bool(server.isEmpty), "loading": false])
        #expect(test.value("loadState") == (server.isEmpty ? "empty" : "loaded"))
        #expect(test.value("lastError") == .null)
        await test.finish(also: [api.verifyNothingPending])
    }

    // MARK: MenuSubGroup.delete

    @Test(arguments: DeletePoint.allCases, kinds)
    func aFailedDeleteKeepsTheRowAndTheNextOneRecovers(point: DeletePoint, error: BackendError) async {
        await test.loadDemo(api: api)
        var server = Self.demo
        var concurrent: (run: CommandRun, call: StubCall)?
        switch point {
        case .first, .duringLoad:
            break
        case .afterDelete:
            await run("delete", ["groupId": "g1"], answering: .groupsDelete, with: .success(.done))
            server.removeAll { $0.id == "g1" }
        case .besideDelete:
            concurrent = await start("delete", ["groupId": "g1"], calling: .groupsDelete)
        }
        if point == .duringLoad { concurrent = await start("load", calling: .groupsList) }
        _ = test.take()
        let before = groupsSnapshot()

        let (delete, call) = await start("delete", ["groupId": "g2"], calling: .groupsDelete)
        #expect(call.arguments == ["menuUid": "m1", "groupId": "g2"])
        call.fail(error)
        #expect(await delete.finished() == .failed(failure(error, input: "delete")))

        let loading: [SubGroupTest.Record] = concurrent == nil ? [.changed("loading", true), .changed("loading", false)] : []
        test.expect(loading + [.event("error", Fixtures.error(error, input: "delete"))])
        #expect(groupsSnapshot() == before)
        // The row is still there to act on: rename finds it with its name.
        #expect(test.send("rename", ["groupId": "g2"]) == nil)
        test.expect([
            .event(
                "navigate",
                ["route": "MenuEditGroup", "args": ["menuUid": "m1", "parent": "groups1", "groupId": "g2", "name": "爽口凉菜"]]),
        ])

        if let concurrent {
            if point == .besideDelete {
                concurrent.call.succeed(.done)
                server.removeAll { $0.id == "g1" }
            } else {
                concurrent.call.succeed(.groups(server))
            }
            #expect(await concurrent.run.finished() == .succeeded(nil))
            // The delete's rows apply before its run ends; the load changes no row, only its state.
            test.expect(
                point == .besideDelete
                    ? [.changed("groups", Fixtures.rows(server)), .changed("loading", false)]
                    : [.changed("loading", false), .changed("loadState", "loaded")])
        }
        #expect(test.value("loading") == false)

        // Deleting again, answered: the row goes.
        #expect(await run("delete", ["groupId": "g2"], answering: .groupsDelete, with: .success(.done)) == .succeeded(nil))
        server.removeAll { $0.id == "g2" }
        #expect(!hasEvents(test.take(), of: test))
        #expect(groupsSnapshot() == ["groups": Fixtures.rows(server), "isEmpty": false, "loading": false])
        #expect(api.calls(to: .groupsDelete).last?.arguments == ["menuUid": "m1", "groupId": "g2"])
        await test.finish(also: [api.verifyNothingPending])
    }

    /// A load the server answered before it deleted a group, arriving after the delete was confirmed,
    /// must not put the deleted row back: the server said that row is gone.
    @Test(arguments: [false, true])
    func aLoadOverlappingASuccessfulDeleteDoesNotBringTheRowBack(loadStartedFirst: Bool) async {
        await test.loadDemo(api: api)
        let (delete, deleteCall): (CommandRun, StubCall)
        let (load, loadCall): (CommandRun, StubCall)
        if loadStartedFirst {
            (load, loadCall) = await start("load", calling: .groupsList)
            (delete, deleteCall) = await start("delete", ["groupId": "g2"], calling: .groupsDelete)
        } else {
            (delete, deleteCall) = await start("delete", ["groupId": "g2"], calling: .groupsDelete)
            (load, loadCall) = await start("load", calling: .groupsList)
        }
        let rest = Self.demo.filter { $0.id != "g2" }
        deleteCall.succeed(.done)
        #expect(await delete.finished() == .succeeded(nil))
        let started: [SubGroupTest.Record] = loadStartedFirst
            ? [.changed("loadState", "loading"), .changed("loading", true)]
            : [.changed("loading", true), .changed("loadState", "loading")]
        test.expect(started + [.changed("groups", Fixtures.rows(rest))])

        // The list as the server had it before the delete.
        loadCall.succeed(.demoGroups)
        #expect(await load.finished() == .succeeded(nil))
        test.expect([.changed("loading", false), .changed("loadState", "loaded")])
        #expect(test.value("groups") == Fixtures.rows(rest))

        // A load sent after the delete is shown as the server answers it.
        let again = [MenuGroup(id: "g6", name: "时令特供", dishCount: 3)] + rest
        #expect(await run("load", answering: .groupsList, with: .success(.groups(again))) == .succeeded(nil))
        #expect(test.value("groups") == Fixtures.rows(again))
        _ = test.take()
        await test.finish(also: [api.verifyNothingPending])
    }

    // MARK: MenuEditGroup.save

    /// An editor opened from the `MenuSubGroup` under test (whose handle, `groups1`, is its
    /// `parent`, found through the editor's lookup), with `name` typed and its records taken.
    private func editor(renaming: Bool, typing name: String) -> EditGroupTest {
        let parent = test
        let args = renaming
            ? MenuEditGroupViewModel.Args(menuUid: "m1", parent: "groups1", groupId: "g2", name: "爽口凉菜")
            : MenuEditGroupViewModel.Args(menuUid: "m1", parent: "groups1")
        let editor = EditGroupTest(locale: .zhHans, handle: "editor1", lookup: { $0 == "groups1" ? parent.viewModel : nil }) {
            MenuEditGroupViewModel(args: args, api: api)
        }
        #expect(editor.send("name", .string(name)) == nil)
        _ = editor.take()
        return editor
    }

    /// Whether the parent's `load` runs (a reload started by an editor has no outcome to wait for).
    private var parentLoads: Bool { test.viewModel.load.runningCount > 0 }

    @Test(arguments: SavePoint.allCases, kinds)
    func aFailedSaveKeepsTheNameAndTheParentAndTheNextOneRecovers(point: SavePoint, error: BackendError) async {
        await test.loadDemo(api: api)
        let editor = editor(renaming: point.isRename, typing: point.isRename ? "凉菜 " : " 特色小炒 ")
        let endpoint: BackendEndpoint = point.isRename ? .groupsRename : .groupsCreate
        var parentLoad: (run: CommandRun, call: StubCall)?
        switch point {
        case .create, .rename:
            break
        case .createRetry:
            await run("save", on: editor, answering: endpoint, with: .failure(.server(status: 500)))
            _ = editor.take()
        case .createDuringParentLoad:
            parentLoad = await start("load", calling: .groupsList)
        }
        _ = test.take()
        let parentBefore = groupsSnapshot()
        let editorBefore = snapshot(["title", "name", "canSave", "isSaving"], of: editor)
        let listCalls = api.calls(to: .groupsList).count

        let occurrence = api.calls(to: endpoint).count + 1
        let save = editor.execute("save")
        let call = await api.call(endpoint, occurrence: occurrence)
        #expect(call.arguments == (point.isRename
            ? ["menuUid": "m1", "groupId": "g2", "name": "凉菜"] : ["menuUid": "m1", "name": "特色小炒"]))
        call.fail(error)
        #expect(await save.finished() == .failed(failure(error, input: "save")))

        // The editor stays open with its text, reports once, and can save again; the parent is untouched.
        editor.expect([
            .changed("isSaving", true), .changed("isSaving", false), .event("error", Fixtures.error(error, input: "save")),
        ])
        #expect(snapshot(["title", "name", "canSave", "isSaving"], of: editor) == editorBefore)
        #expect(editor.refusal("save") == nil)
        test.expect([])
        #expect(groupsSnapshot() == parentBefore)
        #expect(api.calls(to: .groupsList).count == listCalls)
        if let parentLoad {
            #expect(!parentLoad.call.wasCancelled)
            parentLoad.call.succeed(.demoGroups)
            #expect(await parentLoad.run.finished() == .succeeded(nil))
            test.expect([.changed("loading", false), .changed("loadState", "loaded")])
        }

        // Saving again, answered: saved, dismissed, and the parent reloads the server's list.
        let group = point.isRename ? Self.renamed : Self.created
        let server = point.isRename ? Self.demo.map { $0.id == "g2" ? group : $0 } : Self.demo + [group]
        api.answerNext(.groupsList, with: .success(.groups(server)))
        #expect(await run("save", on: editor, answering: endpoint, with: .success(.group(group))) == .succeeded(group.json))
        editor.expect([
            .changed("isSaving", true), .event("saved", ["group": group.json]), .event("dismiss", nil), .changed("isSaving", false),
        ])
        await test.until("the parent's reload to end") { !parentLoads }
        #expect(!hasEvents(test.take(), of: test))
        #expect(groupsSnapshot() == ["groups": Fixtures.rows(server), "isEmpty": false, "loading": false])
        await editor.finish(also: [api.verifyNothingPending])
        await test.finish(also: [api.verifyNothingPending])
    }

    /// The save succeeds and the parent's reload (started inside the host) fails: the editor's save
    /// stands, the parent shows the saved group (applied before the reload), keeps it when the
    /// reload fails, and reports the failure on its own `error`.
    @Test(arguments: [false, true], kinds)
    func aFailedReloadAfterASaveKeepsTheParentsGroups(renaming: Bool, error: BackendError) async {
        await test.loadDemo(api: api)
        let editor = editor(renaming: renaming, typing: renaming ? "凉菜" : "特色小炒")
        let group = renaming ? Self.renamed : Self.created
        let before = groupsSnapshot()

        #expect(await run(
            "save", on: editor, answering: renaming ? .groupsRename : .groupsCreate, with: .success(.group(group))
        ) == .succeeded(group.json))
        editor.expect([
            .changed("isSaving", true), .event("saved", ["group": group.json]), .event("dismiss", nil), .changed("isSaving", false),
        ])
        let server = renaming ? Self.demo.map { $0.id == "g2" ? group : $0 } : Self.demo + [group]
        await api.call(.groupsList, occurrence: 2).fail(error)
        await test.until("the parent's reload to end") { !parentLoads }
        test.expect([
            .changed("groups", Fixtures.rows(server)),
            .changed("loadState", "loading"), .changed("loading", true), .changed("loading", false),
            .changed("lastError", Fixtures.error(error, input: "load")), .changed("loadState", "failed"),
            .event("error", Fixtures.error(error, input: "load")),
        ])
        #expect(before["groups"] == Fixtures.rows(Self.demo))
        #expect(groupsSnapshot() == ["groups": Fixtures.rows(server), "isEmpty": false, "loading": false])
        editor.expect([])
        await editor.finish(also: [api.verifyNothingPending])

        // The parent's next load, answered, shows the saved group.
        #expect(await run("load", answering: .groupsList, with: .success(.groups(server))) == .succeeded(nil))
        #expect(!hasEvents(test.take(), of: test))
        #expect(groupsSnapshot() == ["groups": Fixtures.rows(server), "isEmpty": false, "loading": false])
        await test.finish(also: [api.verifyNothingPending])
    }
}
