import Backend
import BackendTesting
import VMHostEventLoop
import MenuGroups
import VMHostRuntime
import VMHostTesting
import Testing
import VMHostWire

/// `load`, `loading` and `isEmpty` of `MenuSubGroup`, with whole output histories.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuSubGroupLoadTests {
    let recorder = ViewModelRecorder(kind: "MenuSubGroup")
    let api = StubAPI()
    let keeper = Keeper()

    @Test func loadShowsTheGroupsInServerOrder() async throws {
        let viewModel = keeper.keep(recorder.keep(MenuSubGroupViewModel(args: .init(menuUid: "m1"), context: recorder.context, api: api)))
        #expect(recorder.value("groups") == [])
        #expect(recorder.value("loading") == false)
        #expect(recorder.value("isEmpty") == false)

        try recorder.execute("load")
        let call = await api.call(.groupsList)
        #expect(call.arguments == ["menuUid": "m1"])
        #expect(recorder.take() == [.changed("loadState", "loading"), .changed("loading", true)])

        call.succeed(.demoGroups)
        await recorder.finished(0)
        #expect(recorder.take() == [
            .changed("loading", false), .changed("groups", Fixtures.rows(Fixtures.demo)), .changed("loadState", "loaded"),
        ])
        #expect(recorder.outcomes == [.succeeded(nil)])
        #expect(viewModel.groups.value.map(\.id) == ["g1", "g2", "g3", "g4"])
    }

    @Test func anEmptyMenuIsEmptyOnlyAfterALoad() async throws {
        keeper.keep(recorder.keep(MenuSubGroupViewModel(args: .init(menuUid: "m1"), context: recorder.context, api: api)))
        api.answerNext(.groupsList, with: .success(.groups([])))
        try recorder.execute("load")
        await recorder.finished(0)
        #expect(recorder.take() == [
            .changed("loadState", "loading"), .changed("loading", true), .changed("loading", false), .changed("isEmpty", true),
            .changed("loadState", "empty"),
        ])

        api.answerNext(.groupsList, with: .success(.demoGroups))
        try recorder.execute("load")
        await recorder.finished(1)
        #expect(recorder.take() == [
            .changed("loadState", "loading"), .changed("loading", true), .changed("loading", false),
            .changed("groups", Fixtures.rows(Fixtures.demo)), .changed("isEmpty", false), .changed("loadState", "loaded"),
        ])
    }

    @Test func deletingTheLastGroupMakesTheListEmpty() async throws {
        keeper.keep(recorder.keep(MenuSubGroupViewModel(args: .init(menuUid: "m1"), context: recorder.context, api: api)))
        let only = MenuGroup(id: "g1", name: "招牌热菜", dishCount: 12)
        api.answerNext(.groupsList, with: .success(.groups([only])))
        try recorder.execute("load")
        await recorder.finished(0)
        _ = recorder.take()

        api.answerNext(.groupsDelete, with: .success(.done))
        try recorder.execute("delete", ["groupId": "g1"])
        await recorder.finished(1)
        #expect(recorder.take() == [
            .changed("loading", true), .changed("loading", false), .changed("groups", []), .changed("isEmpty", true),
            // The list a late subscriber renders is now the empty state, though no load ran.
            .changed("loadState", "empty"),
        ])
    }

    /// The demo groups loaded, then a reload and a delete of g1 sent and left pending.
    private func loadAndDeleteInFlight() async throws -> (load: StubCall, delete: StubCall) {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)
        try recorder.execute("load")
        try recorder.execute("delete", ["groupId": "g1"])
        return (await api.call(.groupsList, occurrence: 2), await api.call(.groupsDelete))
    }

    /// ActivityIndicator: two requests in flight keep `loading` true until the second one ends.
    @Test func overlappingRequestsKeepLoadingUntilBothEnd() async throws {
        let (load, delete) = try await loadAndDeleteInFlight()
        #expect(recorder.take() == [.changed("loadState", "loading"), .changed("loading", true)])

        delete.succeed(.done)
        await recorder.finished(2)
        let withoutFirst = Array(Fixtures.demo.dropFirst())
        #expect(recorder.take() == [.changed("groups", Fixtures.rows(withoutFirst))])
        #expect(recorder.value("loading") == true)

        load.succeed(.groups(withoutFirst))
        await recorder.finished(1)
        #expect(recorder.take() == [.changed("loading", false), .changed("loadState", "loaded")])
        #expect(recorder.outcomes.suffix(2) == [.succeeded(nil), .succeeded(nil)])
    }

    /// A load replaced by a newer one (`latest`) is cancelled for real, still counts until it has
    /// unwound, and reports nothing.
    @Test func aCancelledLoadCountsUntilItEndsAndReportsNothing() async throws {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)

        try recorder.execute("load")
        let first = await api.call(.groupsList, occurrence: 2)
        try recorder.execute("load")
        let second = await api.call(.groupsList, occurrence: 3)
        // The replaced load has unwound: only the new one is still counted.
        await recorder.until { recorder.context.activity.count == 1 }
        #expect(first.wasCancelled)
        #expect(recorder.outcomes[1] == .cancelled)
        // The replaced load's unwinding and the new load's start may reach the host thread in
        // either order, so `loading` may dip within one turn; it ends true while the new one runs.
        let history = recorder.take().filter { $0 != .changed("loadState", "loading") && $0 != .changed("loadState", "loaded") }
        #expect(recorder.value("loadState") == "loading")
        #expect(history == [.changed("loading", true)]
            || history == [.changed("loading", true), .changed("loading", false), .changed("loading", true)])
        #expect(recorder.value("loading") == true)

        second.succeed(.groups([]))
        await recorder.finished(2)
        #expect(recorder.take() == [
            .changed("loading", false), .changed("groups", []), .changed("isEmpty", true), .changed("loadState", "empty"),
        ])
    }

    @Test func aLoadCancelledAloneEndsLoadingWithoutAnError() async throws {
        try await recorder.loadedSubGroup(api: api, keeper: keeper)

        let execution = try recorder.execute("load")
        let call = await api.call(.groupsList, occurrence: 2)
        #expect(recorder.take() == [.changed("loadState", "loading"), .changed("loading", true)])
        execution.cancel()
        await recorder.until { recorder.context.activity.count == 0 }
        #expect(call.wasCancelled)
        #expect(recorder.outcomes[1] == .cancelled)
        // Back to the state before the load: the last list is still what is shown. (The activity
        // is released as the run ends, before the load state is put back.)
        #expect(recorder.take() == [.changed("loading", false), .changed("loadState", "loaded")])
        #expect(recorder.value("lastError") == .null)
        #expect(recorder.value("groups") == Fixtures.rows(Fixtures.demo))
    }

    /// The seed's base view-model `cancel`: every request of the screen in flight is cancelled, the
    /// list and the load state stay as they were, and nothing is reported.
    @Test func theCancelTriggerCancelsTheLoadAndTheDeletes() async throws {
        let (load, delete) = try await loadAndDeleteInFlight()
        _ = recorder.take()
        try recorder.send("cancel")
        await recorder.until { recorder.context.activity.count == 0 }
        #expect(load.wasCancelled)
        #expect(delete.wasCancelled)
        #expect(recorder.outcomes.suffix(2) == [.cancelled, .cancelled])
        #expect(recorder.take() == [.changed("loadState", "loaded"), .changed("loading", false)])
        #expect(recorder.value("groups") == Fixtures.rows(Fixtures.demo))
        // With nothing in flight it does nothing.
        try recorder.send("cancel")
        #expect(recorder.take() == [])
    }

    /// A failed load in English: the error a late subscriber reads is written for an English user.
    @Test func lastErrorIsInTheViewModelsLocale() async throws {
        let recorder = ViewModelRecorder(kind: "MenuSubGroup", locale: .en)
        keeper.keep(recorder.keep(MenuSubGroupViewModel(args: .init(menuUid: "m1"), context: recorder.context, api: api)))
        api.answerNext(.groupsList, with: .failure(.server(status: 502)))
        try recorder.execute("load")
        await recorder.finished(0)
        #expect(recorder.value("loadState") == "failed")
        #expect(recorder.value("lastError")?["message"] == "Server error (502). Please try again later.")
        #expect(recorder.value("lastError")?["detail"] == "the server answered HTTP 502")
        #expect(recorder.value("isEmpty") == false)
    }

    @Test func englishChangesNoDataOutput() async throws {
        let recorder = ViewModelRecorder(kind: "MenuSubGroup", locale: .en)
        try await recorder.loadedSubGroup(api: api, keeper: keeper)
        #expect(recorder.value("groups") == Fixtures.rows(Fixtures.demo))
    }
}
