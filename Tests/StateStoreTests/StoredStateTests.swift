#if canImport(Glibc)
import Glibc
#endif
import AppComposition
import Backend
import BackendTesting
import HTTPBackend
import Logging
import StateStore
import Testing
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// What the reference app keeps in `--state-dir` beside the session: the device id, the saved
/// lists and the SMS countdowns, each run opening the directory afresh as a new host does.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct StoredStateTests {
    let directory: String
    let logger = Logger(label: "test")

    init() {
        var template = Array("/tmp/vmhost-stored-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        directory = String(cString: made!) + "/state"
    }

    /// The state of one run: the directory opened again.
    func run() throws -> StoredState {
        StoredState(store: try StateStore(directory: directory), logger: logger)
    }

    // MARK: The device id

    @Test func twoRunsOnOneDirectorySendTheSameDeviceID() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        var sent: [String] = []
        for _ in 0..<2 {
            let client = HTTPAPIClient(baseURL: server.baseURL, clock: ManualClock(), deviceID: try run().deviceID())
            _ = try await client.products(page: 1, pageSize: 20)
            let request = try #require(server.requests.last)
            #expect(request.header("uuid") == request.header("X-Device-Id"))
            sent.append(try #require(request.header("uuid")))
        }
        #expect(sent[0] == sent[1])
        #expect(DeviceID.isValid(sent[0]))
        #expect(sent[0] != HTTPAPIClient.processDeviceID)
        // Another directory is another device.
        let other = StoredState(store: try StateStore(directory: directory + "-other"), logger: logger)
        #expect(other.deviceID() != sent[0])
    }

    @Test func aStoredDeviceIDThatIsNoUUIDIsReplacedOnce() throws {
        try StateStore(directory: directory).set("device.id", "not-a-uuid")
        let made = try run().deviceID()
        #expect(DeviceID.isValid(made))
        #expect(try run().deviceID() == made)
    }

    @Test func theSessionsEndKeepsTheDeviceIDAndTheCountdownsAndDeletesTheLists() throws {
        let state = try run()
        let device = state.deviceID()
        state.saveSession(token: "T-1", username: "13800138000")
        state.saveProducts(SavedProductPages(products: Array(DemoCatalog.products[0..<2]), page: 1, hasMore: true), pageSize: 20)
        state.saveGroups(DemoCatalog.groups, menuUid: "m1")
        state.saveCooldowns(["13912345678": .seconds(1_767_225_660)])
        state.deleteSession()

        let next = try run()
        #expect(next.loadSession() == nil)
        #expect(next.deviceID() == device)
        #expect(next.savedCooldowns() == ["13912345678": .seconds(1_767_225_660)])
        #expect(next.savedProducts(pageSize: 20) == nil)
        #expect(next.savedGroups(menuUid: "m1") == nil)
        #expect(try StateStore(directory: directory).keys(prefix: "lists.") == [])
    }

    // MARK: The lists

    @Test func savedListsAreReadByTheNextRun() throws {
        let pages = SavedProductPages(products: Array(DemoCatalog.products[0..<40]), page: 2, hasMore: true)
        try run().saveProducts(pages, pageSize: 20)
        try run().saveGroups(DemoCatalog.groups, menuUid: "m/1 菜单")
        let next = try run()
        #expect(next.savedProducts(pageSize: 20) == pages)
        #expect(next.savedProducts(pageSize: 10) == nil)
        #expect(next.savedGroups(menuUid: "m/1 菜单") == DemoCatalog.groups)
        #expect(next.savedGroups(menuUid: "m2") == nil)
    }

    @Test func atMostMaxListsAreKeptTheLeastRecentlySavedForgottenFirst() throws {
        let state = try run()
        for number in 0...StoredState.maxLists {
            state.saveGroups([MenuGroup(id: "g\(number)", name: "n", dishCount: 0)], menuUid: "m\(number)")
        }
        // m0 is saved again: it becomes the most recent, m1 is the oldest.
        state.saveGroups([], menuUid: "m1")
        state.saveGroups([], menuUid: "m0")
        state.saveGroups([], menuUid: "extra")
        let next = try run()
        #expect(try StateStore(directory: directory).keys(prefix: "lists.groups.").count == StoredState.maxLists)
        #expect(next.savedGroups(menuUid: "m0") == [])
        #expect(next.savedGroups(menuUid: "extra") == [])
        #expect(next.savedGroups(menuUid: "m2") == nil)
        #expect(next.savedGroups(menuUid: "m3") == nil)
        #expect(next.savedGroups(menuUid: "m1") == [])
    }

    @Test func aListTooLargeIsNotSavedAndAMenuIdTooLongNeither() throws {
        let state = try run()
        let name = String(repeating: "名", count: StoredState.maxListBytes / 3)
        state.saveGroups([MenuGroup(id: "g1", name: name, dishCount: 1)], menuUid: "m1")
        state.saveGroups([], menuUid: String(repeating: "m", count: StoredState.maxMenuUidBytes + 1))
        #expect(try StateStore(directory: directory).keys(prefix: "lists.") == [])
    }

    @Test(arguments: [
        "not json at all", "{\"page\":1}", "{\"page\":9,\"hasMore\":true,\"products\":[]}",
        "{\"page\":1,\"hasMore\":true,\"products\":[{\"id\":\"p1\"}]}", "[1,2]", "",
    ])
    func aDamagedSavedListIsAbsent(value: String) throws {
        let store = try StateStore(directory: directory)
        try store.write([("lists.products.pageSize=20", value), ("lists.groups.menuUid=m1", value)])
        let state = try run()
        #expect(state.savedProducts(pageSize: 20) == nil)
        #expect(state.savedGroups(menuUid: "m1") == nil)
        // A good save replaces the damaged value.
        state.saveGroups(DemoCatalog.groups, menuUid: "m1")
        #expect(try run().savedGroups(menuUid: "m1") == DemoCatalog.groups)
    }

    @Test func aSavedValueOverTheBoundIsNotRead() throws {
        let store = try StateStore(directory: directory)
        let huge = "[" + String(repeating: " ", count: StoredState.maxListBytes) + "]"
        try store.set("lists.groups.menuUid=m1", huge)
        #expect(try run().savedGroups(menuUid: "m1") == nil)
    }

    // MARK: The SMS countdowns

    @Test func damagedCountdownsAreIgnoredMemberByMember() throws {
        let store = try StateStore(directory: directory)
        try store.set("login.smsCooldowns", "{\"13912345678\":1767225660000,\"13800138000\":\"soon\",\"x\":-5}")
        #expect(try run().savedCooldowns() == ["13912345678": .milliseconds(1_767_225_660_000)])
        try store.set("login.smsCooldowns", "[]")
        #expect(try run().savedCooldowns() == [:])
        try store.set("login.smsCooldowns", "{\"13912345678\":99999999999999999999}")
        #expect(try run().savedCooldowns() == [:])
    }
}
