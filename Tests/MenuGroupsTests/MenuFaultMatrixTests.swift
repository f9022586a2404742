import Backend
import BackendTesting
import VMHostEventLoop
import MenuGroups
import VMHostRuntime
import VMHostTesting
import Testing
import VMHostWire

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
    nonisolated static let kinds: [DomainError] = [
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

    let recorder = ViewModelRecorder(kind: "MenuSubGroup", handle: "groups1")
    let api = StubAPI()
    let keeper = Keeper()

    // MARK: Helpers

    /// A `MenuSubGroup` on menu `m1` that has not loaded yet.
    private func subGroup() -> MenuSubGroupViewModel {
        keeper.keep(recorder.keep(MenuSubGroupViewModel(args: .init(menuUid: "m1"), context: recorder.context, api: api)))
    }

    /// Runs `command` on `recorder` with its call answered by `answer`; returns its outcome.
    @discardableResult
    private func run(
        _ command: String, _ value: JSON = .null, on recorder: ViewModelRecorder? = nil,
        answering endpoint: BackendEndpoint, with answer: Result<StubReply, DomainError>
    ) async throws -> CommandOutcome? {
        let recorder = recorder ?? self.recorder
        api.answerNext(endpoint, with: answer)
        let index = recorder.outcomes.count
        try recorder.execute(command, value)
        return await recorder.finished(index)
    }

    /// Starts `command` and waits for its backend call, left pending.
    private func start(_ command: String, _ value: JSON = .null, calling endpoint: BackendEndpoint) async throws
        -> (index: Int, call: StubCall)
    {
        let occurrence = api.calls(to: endpoint).count + 1
        try recorder.execute(command, value)
        return (recorder.outcomes.count - 1, await api.call(endpoint, occurrence: occurrence))
    }

    /// The named properties of `recorder`, as a subscriber's mirror holds them.
    private func snapshot(_ names: [String], of recorder: ViewModelRecorder? = nil) -> [String: JSON] {
        let recorder = recorder ?? self.recorder
        return Dictionary(uniqueKeysWithValues: names.map { ($0, recorder.value($0) ?? nil) })
    }

    private func groupsSnapshot() -> [String: JSON] { snapshot(["groups", "isEmpty", "loading"]) }

    /// The failure as `error` and -32004 carry it.
    private func failure(_ error: DomainError, input: String) -> DomainError {
        error.reaching(input: input, locale: .zhHans)
    }

    private func hasEvents(_ records: [ViewModelRecorder.Record]) -> Bool {
        records.contains { if case .event = $0 { true } else { false } }
    }

    // MARK: MenuSubGroup.load

    @Test(arguments: LoadPoint.allCases, kinds)
    func aFailedLoadKeepsTheLastGoodGroupsAndTheNextOneRecovers(point: LoadPoint, error: DomainError) async throws {
        _ = subGroup()
        var server = Self.demo
        var concurrent: (index: Int, call: StubCall)?
        switch point {
        case .first:
            break
        case .reload:
            try await run("load", answering: .groupsList, with: .success(.demoGroups))
        case .reloadEmpty:
            server = []
            try await run("load", answering: .groupsList, with: .success(.groups([])))
        case .reloadAfterDelete:
            try await run("load", answering: .groupsList, with: .success(.demoGroups))
            try await run("delete", ["groupId": "g2"], answering: .groupsDelete, with: .success(.done))
            server.removeAll { $0.id == "g2" }
        case .duringDelete:
            try await run("load", answering: .groupsList, with: .success(.demoGroups))
            concurrent = try await start("delete", ["groupId": "g2"], calling: .groupsDelete)
            server.removeAll { $0.id == "g2" }
        }
        _ = recorder.take()
        let before = groupsSnapshot()

        let (index, call) = try await start("load", calling: .groupsList)
        call.fail(error)
        #expect(await recorder.finished(index) == .failed(failure(error, input: "load")))

        // One error; `loading` stays up only while the other request runs; no row changed; the load
        // state says `failed` with the error until a load succeeds.
        let loading: [ViewModelRecorder.Record] = concurrent == nil ? [.changed("loading", true), .changed("loading", false)] : []
        #expect(recorder.take() == [.changed("loadState", "loading")] + loading + [
            .changed("lastError", Fixtures.error(error, input: "load")), .changed("loadState", "failed"),
            .event("error", Fixtures.error(error, input: "load")),
        ])
        #expect(groupsSnapshot() == before)
        if let concurrent {
            concurrent.call.succeed(.done)
            #expect(await recorder.finished(concurrent.index) == .succeeded(nil))
            #expect(recorder.take() == [.changed("loading", false), .changed("groups", Fixtures.rows(server))])
        }
        #expect(recorder.value("loading") == false)

        // Loading again, answered: the server's list is shown.
        #expect(try await run("load", answering: .groupsList, with: .success(.groups(server))) == .succeeded(nil))
        #expect(!hasEvents(recorder.take()))
        #expect(groupsSnapshot() == ["groups": Fixtures.rows(server), "isEmpty": .bool(server.isEmpty), "loading": false])
        #expect(recorder.value("loadState") == (server.isEmpty ? "empty" : "loaded"))
        #expect(recorder.value("lastError") == .null)
        #expect(api.pendingCalls.isEmpty)
    }

    // MARK: MenuSubGroup.delete

    @Test(arguments: DeletePoint.allCases, kinds)
    func aFailedDeleteKeepsTheRowAndTheNextOneRecovers(point: DeletePoint, error: DomainError) async throws {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)
        var server = Self.demo
        var concurrent: (index: Int, call: StubCall)?
        switch point {
        case .first, .duringLoad:
            break
        case .afterDelete:
            try await run("delete", ["groupId": "g1"], answering: .groupsDelete, with: .success(.done))
            server.removeAll { $0.id == "g1" }
        case .besideDelete:
            concurrent = try await start("delete", ["groupId": "g1"], calling: .groupsDelete)
        }
        if point == .duringLoad { concurrent = try await start("load", calling: .groupsList) }
        _ = recorder.take()
        let before = groupsSnapshot()

        let (index, call) = try await start("delete", ["groupId": "g2"], calling: .groupsDelete)
        #expect(call.arguments == ["menuUid": "m1", "groupId": "g2"])
        call.fail(error)
        #expect(await recorder.finished(index) == .failed(failure(error, input: "delete")))

        let loading: [ViewModelRecorder.Record] = concurrent == nil ? [.changed("loading", true), .changed("loading", false)] : []
        #expect(recorder.take() == loading + [.event("error", Fixtures.error(error, input: "delete"))])
        #expect(groupsSnapshot() == before)
        // The row is still there to act on: rename finds it with its name.
        try recorder.send("rename", ["groupId": "g2"])
        #expect(recorder.take() == [
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
            #expect(await recorder.finished(concurrent.index) == .succeeded(nil))
            let rows: [ViewModelRecorder.Record] =
                point == .besideDelete ? [.changed("groups", Fixtures.rows(server))] : [.changed("loadState", "loaded")]
            #expect(recorder.take() == [.changed("loading", false)] + rows)
        }
        #expect(recorder.value("loading") == false)

        // Deleting again, answered: the row goes.
        #expect(try await run("delete", ["groupId": "g2"], answering: .groupsDelete, with: .success(.done)) == .succeeded(nil))
        server.removeAll { $0.id == "g2" }
        #expect(!hasEvents(recorder.take()))
        #expect(groupsSnapshot() == ["groups": Fixtures.rows(server), "isEmpty": false, "loading": false])
        #expect(api.calls(to: .groupsDelete).last?.arguments == ["menuUid": "m1", "groupId": "g2"])
        #expect(api.pendingCalls.isEmpty)
    }

    /// A load the server answered before it deleted a group, arriving after the delete was confirmed,
    /// must not put the deleted row back: the server said that row is gone.
    @Test(arguments: [false, true])
    func aLoadOverlappingASuccessfulDeleteDoesNotBringTheRowBack(loadStartedFirst: Bool) async throws {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)
        let (deleteIndex, deleteCall): (Int, StubCall)
        let (loadIndex, loadCall): (Int, StubCall)
        if loadStartedFirst {
            (loadIndex, loadCall) = try await start("load", calling: .groupsList)
            (deleteIndex, deleteCall) = try await start("delete", ["groupId": "g2"], calling: .groupsDelete)
        } else {
            (deleteIndex, deleteCall) = try await start("delete", ["groupId": "g2"], calling: .groupsDelete)
            (loadIndex, loadCall) = try await start("load", calling: .groupsList)
        }
        let rest = Self.demo.filter { $0.id != "g2" }
        deleteCall.succeed(.done)
        #expect(await recorder.finished(deleteIndex) == .succeeded(nil))
        let started: [ViewModelRecorder.Record] = loadStartedFirst
            ? [.changed("loadState", "loading"), .changed("loading", true)]
            : [.changed("loading", true), .changed("loadState", "loading")]
        #expect(recorder.take() == started + [.changed("groups", Fixtures.rows(rest))])

        // The list as the server had it before the delete.
        loadCall.succeed(.demoGroups)
        #expect(await recorder.finished(loadIndex) == .succeeded(nil))
        #expect(recorder.take() == [.changed("loading", false), .changed("loadState", "loaded")])
        #expect(recorder.value("groups") == Fixtures.rows(rest))

        // A load sent after the delete is shown as the server answers it.
        let again = [MenuGroup(id: "g6", name: "时令特供", dishCount: 3)] + rest
        #expect(try await run("load", answering: .groupsList, with: .success(.groups(again))) == .succeeded(nil))
        #expect(recorder.value("groups") == Fixtures.rows(again))
    }

    // MARK: MenuEditGroup.save

    /// An editor opened from the `MenuSubGroup` of `recorder` (whose handle is its `parent`), with
    /// `name` typed and its records taken.
    private func editor(renaming: Bool, typing name: String, parent: MenuSubGroupViewModel) throws -> ViewModelRecorder {
        let editorRecorder = ViewModelRecorder(kind: "MenuEditGroup", handle: "editor1")
        editorRecorder.context.lookup = { [weak parent] in $0 == "groups1" ? parent : nil }
        let args = renaming
            ? MenuEditGroupViewModel.Args(menuUid: "m1", parent: "groups1", groupId: "g2", name: "爽口凉菜")
            : MenuEditGroupViewModel.Args(menuUid: "m1", parent: "groups1")
        keeper.keep(editorRecorder.keep(MenuEditGroupViewModel(args: args, context: editorRecorder.context, api: api)))
        try editorRecorder.send("name", .string(name))
        _ = editorRecorder.take()
        return editorRecorder
    }

    /// Whether the parent's `load` runs (a reload started by an editor has no outcome to wait for).
    private var parentLoads: Bool { ((recorder.context.input(named: "load") as? Command<NoValue>)?.runningCount ?? 0) > 0 }

    @Test(arguments: SavePoint.allCases, kinds)
    func aFailedSaveKeepsTheNameAndTheParentAndTheNextOneRecovers(point: SavePoint, error: DomainError) async throws {
        let parent = try await recorder.loadedSubGroup(api: api, keeper: keeper)
        let editor = try editor(renaming: point.isRename, typing: point.isRename ? "凉菜 " : " 特色小炒 ", parent: parent)
        let endpoint: BackendEndpoint = point.isRename ? .groupsRename : .groupsCreate
        var parentLoad: (index: Int, call: StubCall)?
        switch point {
        case .create, .rename:
            break
        case .createRetry:
            try await run("save", on: editor, answering: endpoint, with: .failure(.server(status: 500)))
            _ = editor.take()
        case .createDuringParentLoad:
            parentLoad = try await start("load", calling: .groupsList)
        }
        _ = recorder.take()
        let parentBefore = groupsSnapshot()
        let editorBefore = snapshot(["title", "name", "canSave", "isSaving"], of: editor)
        let listCalls = api.calls(to: .groupsList).count

        let index = editor.outcomes.count
        let occurrence = api.calls(to: endpoint).count + 1
        try editor.execute("save")
        let call = await api.call(endpoint, occurrence: occurrence)
        #expect(call.arguments == (point.isRename
            ? ["menuUid": "m1", "groupId": "g2", "name": "凉菜"] : ["menuUid": "m1", "name": "特色小炒"]))
        call.fail(error)
        #expect(await editor.finished(index) == .failed(failure(error, input: "save")))

        // The editor stays open with its text, reports once, and can save again; the parent is untouched.
        #expect(editor.take() == [
            .changed("isSaving", true), .changed("isSaving", false), .event("error", Fixtures.error(error, input: "save")),
        ])
        #expect(snapshot(["title", "name", "canSave", "isSaving"], of: editor) == editorBefore)
        #expect(editor.disabledReason("save") == nil)
        #expect(recorder.take() == [])
        #expect(groupsSnapshot() == parentBefore)
        #expect(api.calls(to: .groupsList).count == listCalls)
        if let parentLoad {
            #expect(!parentLoad.call.wasCancelled)
            parentLoad.call.succeed(.demoGroups)
            #expect(await recorder.finished(parentLoad.index) == .succeeded(nil))
            #expect(recorder.take() == [.changed("loading", false), .changed("loadState", "loaded")])
        }

        // Saving again, answered: saved, dismissed, and the parent reloads the server's list.
        let group = point.isRename ? Self.renamed : Self.created
        let server = point.isRename ? Self.demo.map { $0.id == "g2" ? group : $0 } : Self.demo + [group]
        api.answerNext(.groupsList, with: .success(.groups(server)))
        #expect(try await run("save", on: editor, answering: endpoint, with: .success(.group(group))) == .succeeded(group.json))
        #expect(editor.take() == [
            .changed("isSaving", true), .event("saved", ["group": group.json]), .event("dismiss", nil), .changed("isSaving", false),
        ])
        await recorder.until { !parentLoads }
        #expect(!hasEvents(recorder.take()))
        #expect(groupsSnapshot() == ["groups": Fixtures.rows(server), "isEmpty": false, "loading": false])
        #expect(api.pendingCalls.isEmpty)
    }

    /// The save succeeds and the parent's reload (started inside the host) fails: the editor's save
    /// stands, the parent shows the saved group (applied before the reload), keeps it when the
    /// reload fails, and reports the failure on its own `error`.
    @Test(arguments: [false, true], kinds)
    func aFailedReloadAfterASaveKeepsTheParentsGroups(renaming: Bool, error: DomainError) async throws {
        let parent = try await recorder.loadedSubGroup(api: api, keeper: keeper)
        let editor = try editor(renaming: renaming, typing: renaming ? "凉菜" : "特色小炒", parent: parent)
        let group = renaming ? Self.renamed : Self.created
        let before = groupsSnapshot()

        #expect(try await run(
            "save", on: editor, answering: renaming ? .groupsRename : .groupsCreate, with: .success(.group(group))
        ) == .succeeded(group.json))
        #expect(editor.take() == [
            .changed("isSaving", true), .event("saved", ["group": group.json]), .event("dismiss", nil), .changed("isSaving", false),
        ])
        let server = renaming ? Self.demo.map { $0.id == "g2" ? group : $0 } : Self.demo + [group]
        await api.call(.groupsList, occurrence: 2).fail(error)
        await recorder.until { !parentLoads }
        #expect(recorder.take() == [
            .changed("groups", Fixtures.rows(server)),
            .changed("loadState", "loading"), .changed("loading", true), .changed("loading", false),
            .changed("lastError", Fixtures.error(error, input: "load")), .changed("loadState", "failed"),
            .event("error", Fixtures.error(error, input: "load")),
        ])
        #expect(before["groups"] == Fixtures.rows(Self.demo))
        #expect(groupsSnapshot() == ["groups": Fixtures.rows(server), "isEmpty": false, "loading": false])
        #expect(editor.take() == [])

        // The parent's next load, answered, shows the saved group.
        #expect(try await run("load", answering: .groupsList, with: .success(.groups(server))) == .succeeded(nil))
        #expect(!hasEvents(recorder.take()))
        #expect(groupsSnapshot() == ["groups": Fixtures.rows(server), "isEmpty": false, "loading": false])
    }
}
