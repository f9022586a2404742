import Backend
import BackendTesting
import MenuGroups
import Testing
import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import VMHostWire

/// The groups saved between runs (`--state-dir`, through ``ListCache``): saved whenever the server
/// confirmed them, shown at once by the next `MenuSubGroup` of the same menu with `isStale` true.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuSubGroupSavedTests {
    let cache = MemoryListCache()
    let api = StubAPI()
    let keeper = Keeper()

    func subGroup(_ recorder: ViewModelRecorder, menuUid: String = "m1", cache: (any ListCache)?) -> MenuSubGroupViewModel {
        keeper.keep(recorder.keep(MenuSubGroupViewModel(args: .init(menuUid: menuUid), context: recorder.context, api: api, cache: cache)))
    }

    @Test func withoutACacheNothingIsStale() async throws {
        let recorder = ViewModelRecorder(kind: "MenuSubGroup")
        _ = subGroup(recorder, cache: nil)
        #expect(recorder.value("isStale") == false)
        api.answerNext(.groupsList, with: .success(.demoGroups))
        try recorder.execute("load")
        await recorder.finished(0)
        #expect(recorder.value("isStale") == false)
        #expect(cache.saves == 0)
    }

    @Test func aLoadSavesTheGroupsAndTheNextScreenOfThatMenuStartsWithThemStale() async throws {
        let first = ViewModelRecorder(kind: "MenuSubGroup")
        _ = subGroup(first, cache: cache)
        api.answerNext(.groupsList, with: .success(.demoGroups))
        try first.execute("load")
        await first.finished(0)
        #expect(cache.groups["m1"] == Fixtures.demo)

        let other = ViewModelRecorder(kind: "MenuSubGroup", handle: "vm2")
        _ = subGroup(other, menuUid: "m2", cache: cache)
        #expect(other.value("groups") == [])
        #expect(other.value("isStale") == false)

        let second = ViewModelRecorder(kind: "MenuSubGroup", handle: "vm3")
        _ = subGroup(second, cache: cache)
        #expect(second.value("groups") == Fixtures.rows(Fixtures.demo))
        #expect(second.value("isStale") == true)
        #expect(second.value("isEmpty") == false)
        #expect(second.value("loadState") == "loaded")
        #expect(second.take() == [])

        let fresh = [MenuGroup(id: "g9", name: "新品", dishCount: 1)]
        api.answerNext(.groupsList, with: .success(.groups(fresh)))
        try second.execute("load")
        await second.finished(0)
        #expect(second.take() == [
            .changed("loadState", "loading"), .changed("loading", true), .changed("loading", false),
            .changed("groups", Fixtures.rows(fresh)), .changed("isStale", false), .changed("loadState", "loaded"),
        ])
        #expect(cache.groups["m1"] == fresh)
    }

    @Test func aFailedLoadKeepsTheStaleGroupsAndADeleteIsSaved() async throws {
        cache.groups["m1"] = Fixtures.demo
        let recorder = ViewModelRecorder(kind: "MenuSubGroup")
        _ = subGroup(recorder, cache: cache)
        api.answerNext(.groupsList, with: .failure(.network("offline")))
        try recorder.execute("load")
        await recorder.finished(0)
        #expect(recorder.value("groups") == Fixtures.rows(Fixtures.demo))
        #expect(recorder.value("isStale") == true)
        #expect(recorder.value("loadState") == "failed")

        api.answerNext(.groupsDelete, with: .success(.done))
        try recorder.execute("delete", ["groupId": "g1"])
        await recorder.finished(1)
        #expect(cache.groups["m1"]?.map(\.id) == ["g2", "g3", "g4"])
    }

    @Test func aSavedEmptyMenuIsShownAsEmpty() {
        cache.groups["m1"] = []
        let recorder = ViewModelRecorder(kind: "MenuSubGroup")
        _ = subGroup(recorder, cache: cache)
        #expect(recorder.value("isEmpty") == true)
        #expect(recorder.value("loadState") == "empty")
        #expect(recorder.value("isStale") == true)
    }
}
