import Backend
import BackendTesting
import MenuGroups
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire

/// `load`, `loading` and `isEmpty` of `MenuSubGroup`, with whole output histories.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuSubGroupLoadTests {
    let api = StubAPI()
    let test: SubGroupTest

    init() {
        test = .subGroup(api: api)
    }

    @Test func loadShowsTheGroupsInServerOrder() async {
        #expect(test.value("groups") == [])
        #expect(test.value("loading") == false)
        #expect(test.value("isEmpty") == false)

        let load = test.execute("load")
        let call = await api.call(.groupsList)
        #expect(call.arguments == ["menuUid": "m1"])
        test.expect([.changed("loadState", "loading"), .changed("loading", true)])

        call.succeed(.demoGroups)
        #expect(await load.finished() == .succeeded(nil))
        test.expect([
            .changed("groups", Fixtures.rows(Fixtures.demo)), .changed("loading", false), .changed("loadState", "loaded"),
        ])
        #expect(test.viewModel.groups.map(\.id) == ["g1", "g2", "g3", "g4"])
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func anEmptyMenuIsEmptyOnlyAfterALoad() async {
        api.answerNext(.groupsList, with: .success(.groups([])))
        #expect(await test.execute("load").finished() == .succeeded(nil))
        // Answered at once: `loading` rises and falls in one turn, which no client sees.
        test.expect([.changed("loadState", "loading"), .changed("isEmpty", true), .changed("loadState", "empty")])

        api.answerNext(.groupsList, with: .success(.demoGroups))
        #expect(await test.execute("load").finished() == .succeeded(nil))
        test.expect([
            .changed("loadState", "loading"), .changed("groups", Fixtures.rows(Fixtures.demo)), .changed("isEmpty", false),
            .changed("loadState", "loaded"),
        ])
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func deletingTheLastGroupMakesTheListEmpty() async {
        let only = MenuGroup(id: "g1", name: "招牌热菜", dishCount: 12)
        api.answerNext(.groupsList, with: .success(.groups([only])))
        #expect(await test.execute("load").finished() == .succeeded(nil))
        _ = test.take()

        api.answerNext(.groupsDelete, with: .success(.done))
        #expect(await test.execute("delete", ["groupId": "g1"]).finished() == .succeeded(nil))
        test.expect([
            .changed("groups", []),
            // The list a late subscriber renders is now the empty state, though no load ran.
            .changed("loadState", "empty"),
            .changed("isEmpty", true),
        ])
        await test.finish(also: [api.verifyNothingPending])
    }

    /// The demo groups loaded, then a reload and a delete of g1 sent and left pending.
    private func loadAndDeleteInFlight() async -> (load: CommandRun, loadCall: StubCall, delete: CommandRun, deleteCall: StubCall) {
        await test.loadDemo(api: api)
        let load = test.execute("load")
        let delete = test.execute("delete", ["groupId": "g1"])
        return (load, await api.call(.groupsList, occurrence: 2), delete, await api.call(.groupsDelete))
    }

    /// ActivityIndicator: two requests in flight keep `loading` true until the second one ends.
    @Test func overlappingRequestsKeepLoadingUntilBothEnd() async {
        let (load, loadCall, delete, deleteCall) = await loadAndDeleteInFlight()
        test.expect([.changed("loadState", "loading"), .changed("loading", true)])

        deleteCall.succeed(.done)
        #expect(await delete.finished() == .succeeded(nil))
        let withoutFirst = Array(Fixtures.demo.dropFirst())
        test.expect([.changed("groups", Fixtures.rows(withoutFirst))])
        #expect(test.value("loading") == true)

        loadCall.succeed(.groups(withoutFirst))
        #expect(await load.finished() == .succeeded(nil))
        test.expect([.changed("loading", false), .changed("loadState", "loaded")])
        await test.finish(also: [api.verifyNothingPending])
    }

    /// A load replaced by a newer one (`latest`) is cancelled for real: it ends at once, hands its
    /// activity to the new load (`loading` stays true, with no dip) and reports nothing.
    @Test func aReplacedLoadIsCancelledAndHandsItsActivityOn() async {
        await test.loadDemo(api: api)

        let replaced = test.execute("load")
        let first = await api.call(.groupsList, occurrence: 2)
        test.expect([.changed("loadState", "loading"), .changed("loading", true)])
        let latest = test.execute("load")
        let second = await api.call(.groupsList, occurrence: 3)
        #expect(await replaced.finished() == .cancelled)
        #expect(first.wasCancelled)
        // The replaced run ends (its flags drop) before the new one starts: the load state steps
        // back to what the replaced run found, then to `loading` again, in the same turn, so a
        // client sees no change; `loading` never dips.
        test.expect([])
        #expect(test.value("loading") == true)
        #expect(test.viewModel.load.runningCount == 1)

        second.succeed(.groups([]))
        #expect(await latest.finished() == .succeeded(nil))
        test.expect([
            .changed("groups", []), .changed("isEmpty", true), .changed("loading", false), .changed("loadState", "empty"),
        ])
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func aLoadCancelledAloneEndsLoadingWithoutAnError() async {
        await test.loadDemo(api: api)

        let load = test.execute("load")
        let call = await api.call(.groupsList, occurrence: 2)
        test.expect([.changed("loadState", "loading"), .changed("loading", true)])
        load.cancel()
        #expect(await load.finished() == .cancelled)
        #expect(call.wasCancelled)
        // Back to the state before the load: the last list is still what is shown. (The activity
        // is released as the run ends, before the load state is put back.)
        test.expect([.changed("loading", false), .changed("loadState", "loaded")])
        #expect(test.value("lastError") == .null)
        #expect(test.value("groups") == Fixtures.rows(Fixtures.demo))
        await test.finish(also: [api.verifyNothingPending])
    }

    /// The seed's base view-model `cancel`: every request of the screen in flight is cancelled, the
    /// list and the load state stay as they were, and nothing is reported.
    @Test func theCancelTriggerCancelsTheLoadAndTheDeletes() async {
        let (load, loadCall, delete, deleteCall) = await loadAndDeleteInFlight()
        _ = test.take()
        #expect(test.send("cancel") == nil)
        #expect(await load.finished() == .cancelled)
        #expect(await delete.finished() == .cancelled)
        #expect(loadCall.wasCancelled)
        #expect(deleteCall.wasCancelled)
        test.expect([.changed("loadState", "loaded"), .changed("loading", false)])
        #expect(test.value("groups") == Fixtures.rows(Fixtures.demo))
        // With nothing in flight it does nothing.
        #expect(test.send("cancel") == nil)
        test.expect([])
        await test.finish(also: [api.verifyNothingPending])
    }

    /// A failed load in English: the error a late subscriber reads is written for an English user.
    @Test func lastErrorIsInTheViewModelsLocale() async {
        let test = SubGroupTest.subGroup(api: api, locale: .en)
        api.answerNext(.groupsList, with: .failure(.server(status: 502)))
        #expect(await test.execute("load").finished() == .failed(Fixtures.failure(.server(status: 502), input: "load", locale: .en)))
        #expect(test.value("loadState") == "failed")
        #expect(test.value("lastError")?["message"] == "Server error (502). Please try again later.")
        #expect(test.value("lastError")?["detail"] == "the server answered HTTP 502")
        #expect(test.value("isEmpty") == false)
        _ = test.take()
        await test.finish(also: [api.verifyNothingPending])
    }

    /// In English the demo data's group names read in English (protocol/backend.md, English
    /// names); ids and dish counts are the server's.
    @Test func englishShowsTheDemoGroupsInEnglish() async {
        let test = SubGroupTest.subGroup(api: api, locale: .en)
        await test.loadDemo(api: api)
        #expect(test.value("groups") == [
            ["id": "g1", "name": "Signature Hot Dishes", "dishCount": 12], ["id": "g2", "name": "Cold Starters", "dishCount": 8],
            ["id": "g3", "name": "Staples & Dim Sum", "dishCount": 6], ["id": "g4", "name": "Drinks", "dishCount": 10],
        ])
        await test.finish(also: [api.verifyNothingPending])
    }
}
