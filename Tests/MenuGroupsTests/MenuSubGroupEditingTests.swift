import Backend
import BackendTesting
import MenuGroups
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire

/// `create`, `rename` and `delete` of `MenuSubGroup`, and its args.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuSubGroupEditingTests {
    let api = StubAPI()
    let test: SubGroupTest

    init() {
        test = .subGroup(api: api, handle: "groups1")
    }

    @Test func createNavigatesToANewEditorWithThisViewModelAsParent() async {
        await test.loadDemo(api: api)
        #expect(test.send("create") == nil)
        test.expect([
            .event("navigate", ["route": "MenuEditGroup", "args": ["menuUid": "m1", "parent": "groups1"]]),
        ])
        #expect(api.calls.count == 1)
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func renameNavigatesWithTheGroupsIdAndName() async {
        await test.loadDemo(api: api)
        #expect(test.send("rename", ["groupId": "g3"]) == nil)
        test.expect([
            .event(
                "navigate",
                ["route": "MenuEditGroup", "args": ["menuUid": "m1", "parent": "groups1", "groupId": "g3", "name": "主食点心"]]),
        ])
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func renameOfAnUnknownOrMissingGroupNamesTheValue() async {
        await test.loadDemo(api: api)
        #expect(test.send("rename", ["groupId": "g9"]) == InputError.refused(
            path: "params.value.groupId", reason: "no group \"g9\" in the list (groups: g1, g2, g3, g4)"))
        #expect(test.send("rename", [:])
            == InputError.invalidValue(JSONDecodingError(path: "params.value.groupId", problem: "is required (a string)")))
        #expect(test.send("rename", ["groupId": ""])
            == InputError.invalidValue(JSONDecodingError(path: "params.value.groupId", problem: "must not be empty")))
        test.expect([])
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func deleteRemovesTheGroupLocallyWithoutAReload() async {
        await test.loadDemo(api: api)
        let delete = test.execute("delete", ["groupId": "g2"])
        let call = await api.call(.groupsDelete)
        #expect(call.arguments == ["menuUid": "m1", "groupId": "g2"])
        test.expect([.changed("loading", true)])

        call.succeed(.done)
        #expect(await delete.finished() == .succeeded(nil))
        let rest = Fixtures.demo.filter { $0.id != "g2" }
        test.expect([.changed("groups", Fixtures.rows(rest)), .changed("loading", false)])
        #expect(api.calls(to: .groupsList).count == 1)
        await test.finish(also: [api.verifyNothingPending])
    }

    /// `delete` is ignored per group: the same group twice at once is refused and sent once; other
    /// groups run side by side.
    @Test func deletingTheSameGroupTwiceAtOnceIsRefused() async {
        await test.loadDemo(api: api)
        let g1 = test.execute("delete", ["groupId": "g1"])
        #expect(test.execute("delete", ["groupId": "g1"]).refusal == .disabled(reason: "already running for g1"))
        let g2 = test.execute("delete", ["groupId": "g2"])
        let first = await api.call(.groupsDelete, occurrence: 1)
        let second = await api.call(.groupsDelete, occurrence: 2)
        #expect(api.calls(to: .groupsDelete).map(\.arguments["groupId"]) == ["g1", "g2"])
        test.expect([.changed("loading", true)])

        first.succeed(.done)
        #expect(await g1.finished() == .succeeded(nil))
        test.expect([.changed("groups", Fixtures.rows(Array(Fixtures.demo.dropFirst())))])
        second.succeed(.done)
        #expect(await g2.finished() == .succeeded(nil))
        test.expect([.changed("groups", Fixtures.rows(Array(Fixtures.demo.dropFirst(2)))), .changed("loading", false)])

        // Once the first delete ended, the same key is accepted again.
        api.answerNext(.groupsDelete, with: .failure(.server(status: 404)))
        #expect(await test.execute("delete", ["groupId": "g1"]).finished() == .failed(Fixtures.failure(.server(status: 404), input: "delete")))
        // Answered at once: `loading` rises and falls in one turn, which no client sees.
        test.expect([.event("error", Fixtures.error(.server(status: 404), input: "delete"))])
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func deleteNeedsAGroupId() async {
        await test.loadDemo(api: api)
        #expect(test.execute("delete", [:]).refusal
            == InputError.invalidValue(JSONDecodingError(path: "params.value.groupId", problem: "is required (a string)")))
        #expect(test.execute("delete", "g1").refusal
            == InputError.invalidValue(JSONDecodingError(path: "params.value", problem: "expected an object, got a string")))
        await test.finish(also: [api.verifyNothingPending])
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
            _ = try factory.make(args: args, context: Fixtures.context(kind: MenuSubGroupViewModel.kind))
            Issue.record("\(String(describing: args)) was accepted")
        } catch {
            #expect(error.description == message)
        }
    }
}
