import Backend
import BackendTesting
import VMHostEventLoop
import MenuGroups
import VMHostRuntime
import VMHostTesting
import Testing
import VMHostWire

/// `create`, `rename` and `delete` of `MenuSubGroup`, and its args.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuSubGroupEditingTests {
    let recorder = ViewModelRecorder(kind: "MenuSubGroup", handle: "groups1")
    let api = StubAPI()
    let keeper = Keeper()

    @Test func createNavigatesToANewEditorWithThisViewModelAsParent() async throws {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)
        try recorder.send("create")
        #expect(recorder.take() == [
            .event("navigate", ["route": "MenuEditGroup", "args": ["menuUid": "m1", "parent": "groups1"]]),
        ])
        #expect(api.calls.count == 1)
    }

    @Test func renameNavigatesWithTheGroupsIdAndName() async throws {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)
        try recorder.send("rename", ["groupId": "g3"])
        #expect(recorder.take() == [
            .event(
                "navigate",
                ["route": "MenuEditGroup", "args": ["menuUid": "m1", "parent": "groups1", "groupId": "g3", "name": "主食点心"]]),
        ])
    }

    @Test func renameOfAnUnknownOrMissingGroupNamesTheValue() async throws {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)
        #expect(throws: InputError.refused(
            path: "params.value.groupId", reason: "no group \"g9\" in the list (groups: g1, g2, g3, g4)")) {
            try recorder.send("rename", ["groupId": "g9"])
        }
        #expect(throws: InputError.invalidValue(JSONDecodingError(path: "params.value.groupId", problem: "is required (a string)"))) {
            try recorder.send("rename", [:])
        }
        #expect(throws: InputError.invalidValue(JSONDecodingError(path: "params.value.groupId", problem: "must not be empty"))) {
            try recorder.send("rename", ["groupId": ""])
        }
        #expect(recorder.take() == [])
    }

    @Test func deleteRemovesTheGroupLocallyWithoutAReload() async throws {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)
        try recorder.execute("delete", ["groupId": "g2"])
        let call = await api.call(.groupsDelete)
        #expect(call.arguments == ["menuUid": "m1", "groupId": "g2"])
        #expect(recorder.take() == [.changed("loading", true)])

        call.succeed(.done)
        await recorder.finished(1)
        let rest = Fixtures.demo.filter { $0.id != "g2" }
        #expect(recorder.take() == [.changed("loading", false), .changed("groups", Fixtures.rows(rest))])
        #expect(recorder.outcomes.last == .succeeded(nil))
        #expect(api.calls(to: .groupsList).count == 1)
    }

    /// `delete` is ignored per group: the same group twice at once is refused and sent once; other
    /// groups run side by side.
    @Test func deletingTheSameGroupTwiceAtOnceIsRefused() async throws {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)
        try recorder.execute("delete", ["groupId": "g1"])
        #expect(throws: InputError.disabled(reason: "already running for g1")) {
            try recorder.execute("delete", ["groupId": "g1"])
        }
        try recorder.execute("delete", ["groupId": "g2"])
        let first = await api.call(.groupsDelete, occurrence: 1)
        let second = await api.call(.groupsDelete, occurrence: 2)
        #expect(api.calls(to: .groupsDelete).map(\.arguments["groupId"]) == ["g1", "g2"])
        #expect(recorder.take() == [.changed("loading", true)])

        first.succeed(.done)
        await recorder.finished(1)
        #expect(recorder.take() == [.changed("groups", Fixtures.rows(Array(Fixtures.demo.dropFirst())))])
        second.succeed(.done)
        await recorder.finished(3)
        #expect(recorder.take() == [.changed("loading", false), .changed("groups", Fixtures.rows(Array(Fixtures.demo.dropFirst(2))))])

        // Once the first delete ended, the same key is accepted again.
        api.answerNext(.groupsDelete, with: .failure(.server(status: 404)))
        try recorder.execute("delete", ["groupId": "g1"])
        await recorder.finished(4)
        #expect(recorder.take() == [
            .changed("loading", true), .changed("loading", false),
            .event("error", Fixtures.error(.server(status: 404), input: "delete")),
        ])
    }

    @Test func deleteNeedsAGroupId() async throws {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)
        #expect(throws: InputError.invalidValue(JSONDecodingError(path: "params.value.groupId", problem: "is required (a string)"))) {
            try recorder.execute("delete", [:])
        }
        #expect(throws: InputError.invalidValue(JSONDecodingError(path: "params.value", problem: "expected an object, got a string"))) {
            try recorder.execute("delete", "g1")
        }
    }

    @Test(arguments: [
        (nil, "params.args.menuUid: is required (a string)"),
        (["menuUid": ""], "params.args.menuUid: must not be empty"),
        (["menuUid": 7], "params.args.menuUid: expected a string, got a number"),
        (["menuUid": "m1", "menu": "m1"], "params.args.menu: is not a known member (expected one of: menuUid)"),
    ] as [(JSON?, String)])
    func argsAreValidatedByName(args: JSON?, message: String) {
        let factory = MenuSubGroupViewModel.factory(api: api)
        do {
            _ = try factory.make(args: args, context: recorder.context)
            Issue.record("\(String(describing: args)) was accepted")
        } catch {
            #expect(error.description == message)
        }
    }
}
