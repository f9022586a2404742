import Backend
import BackendTesting
import MenuGroups
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire

/// The groups saved between runs (`--state-dir`, through ``ListCache``): saved whenever the server
/// confirmed them, shown at once by the next `MenuSubGroup` of the same menu with `isStale` true.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuSubGroupSavedTests {
    let cache = MemoryListCache()
    let api = StubAPI()

    @Test func withoutACacheNothingIsStale() async {
        let test = SubGroupTest.subGroup(api: api, cache: nil)
        #expect(test.value("isStale") == false)
        api.answerNext(.groupsList, with: .success(.demoGroups))
        #expect(await test.execute("load").finished() == .succeeded(nil))
        #expect(test.value("isStale") == false)
        #expect(cache.saves == 0)
        _ = test.take()
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func aLoadSavesTheGroupsAndTheNextScreenOfThatMenuStartsWithThemStale() async {
        let first = SubGroupTest.subGroup(api: api, cache: cache)
        api.answerNext(.groupsList, with: .success(.demoGroups))
        #expect(await first.execute("load").finished() == .succeeded(nil))
        #expect(cache.groups["m1"] == Fixtures.demo)
        _ = first.take()
        await first.finish()

        let other = SubGroupTest.subGroup(api: api, menuUid: "m2", handle: "vm2", cache: cache)
        #expect(other.value("groups") == [])
        #expect(other.value("isStale") == false)
        await other.finish()

        let second = SubGroupTest.subGroup(api: api, handle: "vm3", cache: cache)
        #expect(second.value("groups") == Fixtures.rows(Fixtures.demo))
        #expect(second.value("isStale") == true)
        #expect(second.value("isEmpty") == false)
        #expect(second.value("loadState") == "loaded")
        second.expect([])

        let fresh = [MenuGroup(id: "g9", name: "新品", dishCount: 1)]
        api.answerNext(.groupsList, with: .success(.groups(fresh)))
        #expect(await second.execute("load").finished() == .succeeded(nil))
        second.expect([
            .changed("loadState", "loading"), .changed("groups", Fixtures.rows(fresh)), .changed("isStale", false),
            .changed("loadState", "loaded"),
        ])
        #expect(cache.groups["m1"] == fresh)
        await second.finish(also: [api.verifyNothingPending])
    }

    @Test func aFailedLoadKeepsTheStaleGroupsAndADeleteIsSaved() async {
        cache.groups["m1"] = Fixtures.demo
        let test = SubGroupTest.subGroup(api: api, cache: cache)
        api.answerNext(.groupsList, with: .failure(.network("offline")))
        #expect(await test.execute("load").finished() == .failed(Fixtures.failure(.network("offline"), input: "load")))
        #expect(test.value("groups") == Fixtures.rows(Fixtures.demo))
        #expect(test.value("isStale") == true)
        #expect(test.value("loadState") == "failed")

        api.answerNext(.groupsDelete, with: .success(.done))
        #expect(await test.execute("delete", ["groupId": "g1"]).finished() == .succeeded(nil))
        #expect(cache.groups["m1"]?.map(\.id) == ["g2", "g3", "g4"])
        _ = test.take()
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func aSavedEmptyMenuIsShownAsEmpty() async {
        cache.groups["m1"] = []
        let test = SubGroupTest.subGroup(api: api, cache: cache)
        #expect(test.value("isEmpty") == true)
        #expect(test.value("loadState") == "empty")
        #expect(test.value("isStale") == true)
        await test.finish()
    }
}
