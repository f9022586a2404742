@_spi(Transport) import VMHostCore
import Backend
@_spi(Transport) import VMHostEventLoop
import MenuGroups
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire

/// The two kinds together on a real host, in-process: navigation through the client, and the
/// editor's save reloading its parent inside the host. The embedded backend and the host share
/// one manual clock, so latency and timeouts are driven by `control.clock.advance`. The host is
/// configured as the reference app's: Simplified Chinese unless a client asks for English, and the
/// backend's error kinds.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuGroupsWireTests {
    let clock = ManualClock()
    let backend: EmbeddedBackend
    let client: InProcessConnection

    init() {
        backend = EmbeddedBackend(clock: clock, timeout: .milliseconds(1000))
        client = InProcessConnection(
            configuration: .init(
                clock: clock, factories: [MenuSubGroupViewModel.factory(api: backend), MenuEditGroupViewModel.factory(api: backend)],
                testControls: true, defaultLocale: .zhHans, locales: AppLocale.referenceApp, errorKinds: BackendError.kindNames))
    }

    static let demo = Fixtures.rows(Fixtures.demo)

    /// Creates `MenuSubGroup` "groups", subscribes (s1) and loads the demo groups.
    private func openGroups() async throws {
        #expect(await client.request("vm.create", ["kind": "MenuSubGroup", "args": ["menuUid": "m1"], "id": "groups"]).errorCode == nil)
        #expect(await client.request("vm.subscribe", ["vm": "groups"]).log == [
            .result([
                "subscription": "s1",
                "values": ["groups": [], "loading": false, "isEmpty": false, "isStale": false, "loadState": "idle", "lastError": nil],
            ]),
        ])
        #expect(await client.request("vm.send", ["vm": "groups", "input": "load"]).log == [
            // `loading` rises and falls inside the load's own turn: only the load state shows it.
            .changed("s1", ["loadState": "loading"]), .changed("s1", ["groups": Self.demo, "loadState": "loaded"]), .result([:]),
        ])
    }

    /// Creates the editor the `navigate` event asked for as "editor" and subscribes (s2).
    private func openEditor(from navigate: Exchange, expectedValues: JSON) async throws {
        let args = try #require(navigate.events.first?["value"]?["args"])
        #expect(await client.request("vm.create", ["kind": "MenuEditGroup", "args": args, "id": "editor"]).errorCode == nil)
        #expect(await client.request("vm.subscribe", ["vm": "editor"]).log == [
            .result(["subscription": "s2", "values": expectedValues]),
        ])
    }

    @Test func createThenSaveReloadsTheParentInsideTheHost() async throws {
        try await openGroups()
        let navigate = await client.request("vm.send", ["vm": "groups", "input": "create"])
        #expect(navigate.log == [
            .event("s1", "navigate", ["route": "MenuEditGroup", "args": ["menuUid": "m1", "parent": "groups"]]), .result([:]),
        ])
        try await openEditor(
            from: navigate, expectedValues: ["title": "新建分组", "name": "", "canSave": false, "isSaving": false])

        #expect(await client.request("vm.send", ["vm": "editor", "input": "name", "value": " 特色小炒 "]).log == [
            .changed("s2", ["name": " 特色小炒 ", "canSave": true]), .result([:]),
        ])
        let group: JSON = ["id": "g5", "name": "特色小炒", "dishCount": 0]
        let save = await client.request("vm.send", ["vm": "editor", "input": "save"])
        #expect(save.log == [
            .changed("s2", ["isSaving": true]),
            .event("s2", "saved", ["group": group]),
            .event("s2", "dismiss", nil),
            // The parent shows the saved group at once and reloads by itself: its subscriber sees the
            // new list with no request of its own.
            .changed("s1", ["groups": .array(Fixtures.demo.map(\.json) + [group]), "loadState": "loading"]),
            .changed("s2", ["isSaving": false]),
            .result(["value": group]),
            .changed("s1", ["loadState": "loaded"]),
        ])
        #expect(backend.server.menus["m1"]?.count == 5)
    }

    @Test func theParentsReloadIsVisibleAsLoadingWhileItRuns() async throws {
        try await openGroups()
        let navigate = await client.request("vm.send", ["vm": "groups", "input": "create"])
        try await openEditor(
            from: navigate, expectedValues: ["title": "新建分组", "name": "", "canSave": false, "isSaving": false])
        await client.request("vm.send", ["vm": "editor", "input": "name", "value": "特色小炒"])
        backend.latency = .milliseconds(100)

        #expect(await client.start("vm.send", ["vm": "editor", "input": "save"], id: "save").map(WireLog.init) == [
            .changed("s2", ["isSaving": true]),
        ])
        let group: JSON = ["id": "g5", "name": "特色小炒", "dishCount": 0]
        let saved = await client.advance(ms: 100)
        #expect(saved.messages.map(WireLog.init).prefix(7) == [
            .event("s2", "saved", ["group": group]),
            .event("s2", "dismiss", nil),
            .changed("s1", ["groups": .array(Fixtures.demo.map(\.json) + [group]), "loadState": "loading"]),
            .changed("s2", ["isSaving": false]),
            .result(["value": group]),  // the save's reply
            .changed("s1", ["loading": true]),
            .result(["now": 100]),  // control.clock.advance
        ])
        let reloaded = await client.advance(ms: 100)
        #expect(reloaded.log == [
            .changed("s1", ["loading": false, "loadState": "loaded"]), .result(["now": 200]),
        ])
    }

    @Test func renameThenSaveReloadsTheParent() async throws {
        try await openGroups()
        let navigate = await client.request("vm.send", ["vm": "groups", "input": "rename", "value": ["groupId": "g2"]])
        #expect(navigate.log == [
            .event("s1", "navigate", ["route": "MenuEditGroup", "args": ["menuUid": "m1", "parent": "groups", "groupId": "g2", "name": "爽口凉菜"]]),
            .result([:]),
        ])
        try await openEditor(
            from: navigate, expectedValues: ["title": "重命名分组", "name": "爽口凉菜", "canSave": false, "isSaving": false])

        let refused = await client.request("vm.send", ["vm": "editor", "input": "save"])
        #expect(refused.log == [.error(-32003, ["input": "save", "reason": "the name is unchanged"])])

        await client.request("vm.send", ["vm": "editor", "input": "name", "value": "凉菜"])
        let renamed: JSON = ["id": "g2", "name": "凉菜", "dishCount": 8]
        var groups = Fixtures.demo
        groups[1].name = "凉菜"
        #expect(await client.request("vm.send", ["vm": "editor", "input": "save"]).log == [
            .changed("s2", ["isSaving": true]),
            .event("s2", "saved", ["group": renamed]),
            .event("s2", "dismiss", nil),
            .changed("s1", ["groups": Fixtures.rows(groups), "loadState": "loading"]),
            .changed("s2", ["isSaving": false]),
            .result(["value": renamed]),
            .changed("s1", ["loadState": "loaded"]),
        ])
    }

    @Test func aFailedRenameKeepsEveryonesData() async throws {
        try await openGroups()
        let navigate = await client.request("vm.send", ["vm": "groups", "input": "rename", "value": ["groupId": "g2"]])
        try await openEditor(
            from: navigate, expectedValues: ["title": "重命名分组", "name": "爽口凉菜", "canSave": false, "isSaving": false])
        await client.request("vm.send", ["vm": "editor", "input": "name", "value": "凉菜"])
        backend.script(.groupsRename, [.http(status: 500)])
        let failure: JSON = [
            "kind": "server", "code": 500, "message": "服务器错误（500），请稍后重试", "detail": "the server answered HTTP 500",
            "input": "save",
        ]
        #expect(await client.request("vm.send", ["vm": "editor", "input": "save"]).log == [
            .changed("s2", ["isSaving": true]),
            .changed("s2", ["isSaving": false]),
            .event("s2", "error", failure),
            .error(-32004, failure),
        ])
        #expect(await client.request("vm.get", ["vm": "groups"]).result?["values"]?["groups"] == Self.demo)
        #expect(await client.request("vm.get", ["vm": "editor"]).result?["values"]?["name"] == "凉菜")
    }

    @Test func aSaveAfterTheParentWasDisposedStillSucceeds() async throws {
        try await openGroups()
        let navigate = await client.request("vm.send", ["vm": "groups", "input": "create"])
        try await openEditor(
            from: navigate, expectedValues: ["title": "新建分组", "name": "", "canSave": false, "isSaving": false])
        #expect(await client.request("vm.dispose", ["vm": "groups"]).log == [.result([:])])

        await client.request("vm.send", ["vm": "editor", "input": "name", "value": "夜宵"])
        let group: JSON = ["id": "g5", "name": "夜宵", "dishCount": 0]
        #expect(await client.request("vm.send", ["vm": "editor", "input": "save"]).log == [
            .changed("s2", ["isSaving": true]),
            .event("s2", "saved", ["group": group]),
            .event("s2", "dismiss", nil),
            .changed("s2", ["isSaving": false]),
            .result(["value": group]),
        ])
        #expect(await client.request("vm.list").result == [["vm": "editor", "kind": "MenuEditGroup"]])
        #expect(backend.server.menus["m1"]?.count == 5)
    }

    @Test func aParentOfAnotherKindIsNotReloaded() async throws {
        try await openGroups()
        #expect(await client.request(
            "vm.create", ["kind": "MenuEditGroup", "args": ["menuUid": "m1", "parent": "other"], "id": "other"]).errorCode == nil)
        #expect(await client.request(
            "vm.create", ["kind": "MenuEditGroup", "args": ["menuUid": "m1", "parent": "other", "name": "夜宵"], "id": "editor"]
        ).errorCode == nil)
        let save = await client.request("vm.send", ["vm": "editor", "input": "save"])
        #expect(save.result == ["value": ["id": "g5", "name": "夜宵", "dishCount": 0]])
        #expect(save.changes.isEmpty)
    }

    @Test func deletingTheSameGroupTwiceAtOnceIsRefusedOnTheWire() async throws {
        try await openGroups()
        backend.latency = .milliseconds(100)
        #expect(await client.start("vm.send", ["vm": "groups", "input": "delete", "value": ["groupId": "g1"]], id: "d1")
            .map(WireLog.init) == [.changed("s1", ["loading": true])])
        #expect(await client.request("vm.send", ["vm": "groups", "input": "delete", "value": ["groupId": "g1"]]).log == [
            .error(-32003, ["input": "delete", "reason": "already running for g1"]),
        ])
        #expect(await client.start("vm.send", ["vm": "groups", "input": "delete", "value": ["groupId": "g3"]], id: "d3")
            .isEmpty)
        let done = await client.advance(ms: 100)
        #expect(done.messages.map(WireLog.init) == [
            .changed("s1", ["groups": Fixtures.rows(Array(Fixtures.demo.dropFirst()))]),
            .result([:]),  // d1
            .changed("s1", ["groups": Fixtures.rows(Fixtures.demo.filter { !["g1", "g3"].contains($0.id) }), "loading": false]),
            .result([:]),  // d3
            .result(["now": 100]),  // control.clock.advance
        ])
        #expect(backend.server.menus["m1"]?.map(\.id) == ["g2", "g4"])
    }

    @Test func aLoadThatTimesOutKeepsTheGroups() async throws {
        try await openGroups()
        backend.script(.groupsList, [.timeout])
        #expect(await client.start("vm.send", ["vm": "groups", "input": "load"], id: "load").map(WireLog.init) == [
            .changed("s1", ["loadState": "loading"]), .changed("s1", ["loading": true]),
        ])
        let failure: JSON = [
            "kind": "timeout", "code": nil, "message": "请求超时，请稍后重试", "detail": "the request timed out", "input": "load",
        ]
        #expect(await client.advance(ms: 1000).messages.map(WireLog.init) == [
            .changed("s1", ["loading": false, "lastError": failure, "loadState": "failed"]),
            .event("s1", "error", failure), .error(-32004, failure), .result(["now": 1000]),
        ])
        #expect(await client.request("vm.get", ["vm": "groups"]).result?["values"]?["groups"] == Self.demo)
    }

    @Test func englishTitlesAndArgErrorsOnTheWire() async throws {
        await client.request("initialize", ["locale": "en"])
        await client.request("vm.create", ["kind": "MenuEditGroup", "args": ["menuUid": "m1"], "id": "new"])
        await client.request("vm.create", ["kind": "MenuEditGroup", "args": ["menuUid": "m1", "groupId": "g1", "name": "a"], "id": "re"])
        #expect(await client.request("vm.get", ["vm": "new", "outputs": ["title"]]).result == ["values": ["title": "New group"]])
        #expect(await client.request("vm.get", ["vm": "re", "outputs": ["title"]]).result == ["values": ["title": "Rename group"]])

        let missing = await client.request("vm.create", ["kind": "MenuSubGroup"])
        #expect(missing.errorCode == -32602)
        #expect(missing.error?["message"]?.stringValue?.contains("params.args.menuUid: is required") == true)
        let empty = await client.request("vm.create", ["kind": "MenuSubGroup", "args": ["menuUid": ""]])
        #expect(empty.error?["message"]?.stringValue?.contains("params.args.menuUid: must not be empty") == true)
        let rename = await client.request("vm.create", ["kind": "MenuSubGroup", "args": ["menuUid": "m1"], "id": "g"])
        #expect(rename.errorCode == nil)
        let unknown = await client.request("vm.send", ["vm": "g", "input": "rename", "value": ["groupId": "g1"]])
        #expect(unknown.errorCode == -32602)
        #expect(unknown.error?["message"]?.stringValue?.contains("params.value.groupId: no group \"g1\"") == true)
    }

    @Test func describeShowsTheSchemas() async throws {
        let described = await client.request("host.describe", ["kind": "MenuSubGroup"])
        let kind = described.result?["kinds"]?.arrayValue?.first ?? described.result
        let outputs = kind?["outputs"]?.arrayValue ?? []
        #expect(outputs.map { $0["name"]?.stringValue } == [
            "groups", "loading", "isEmpty", "isStale", "loadState", "lastError", "error", "navigate",
        ])
        #expect(outputs.first?["schema"]?["items"] == MenuGroup.jsonSchema)
        let inputs = kind?["inputs"]?.arrayValue ?? []
        #expect(inputs.map { $0["name"]?.stringValue } == ["load", "create", "rename", "delete", "cancel"])
        #expect(inputs.map { $0["policy"]?.stringValue } == ["latest", nil, nil, "ignorePerKey", nil])
    }
}
