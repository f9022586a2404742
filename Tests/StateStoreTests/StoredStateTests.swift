#if canImport(Glibc)
import Glibc
#endif
@testable import AppComposition
import Backend
import BackendTesting
import HTTPBackend
import Logging
@testable import StateStore
import Synchronization
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// What the reference app keeps in `--state-dir` beside the session: the device id, the saved
/// lists of each login and the SMS countdowns, each run opening the directory afresh as a new host
/// does; and several hosts on one directory.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct StoredStateTests {
    let directory: String
    let log = LogLines()
    let clock = ManualClock()

    init() {
        var template = Array("/tmp/vmhost-stored-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        directory = String(cString: made!) + "/state"
    }

    var logger: Logger { Logger(label: "test") { _ in LogLines.Handler(lines: log) } }

    /// The state of one run: the directory opened again (a statement waits 10 ms for a lock).
    func run() throws -> StoredState {
        StoredState(store: try StateStore(directory: directory, busyTimeout: .milliseconds(10)), logger: logger, clock: clock)
    }

    /// A stdio host's session over `state`, and its lists.
    func host(_ state: StoredState) -> (session: AppSession, lists: SessionLists) {
        let session = AppSession(storage: state)
        return (session, SessionLists(state: state, session: session, holder: state))
    }

    func keys(_ prefix: String = "lists.") throws -> [String] {
        try StateStore(directory: directory).keys(prefix: prefix).filter { $0 != StoredState.listIndexKey }
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
        let other = StoredState(store: try StateStore(directory: directory + "-other"), logger: logger, clock: clock)
        #expect(other.deviceID() != sent[0])
    }

    @Test func aStoredDeviceIDThatIsNoUUIDIsReplacedOnce() throws {
        try StateStore(directory: directory).set("device.id", "not-a-uuid")
        let made = try run().deviceID()
        #expect(DeviceID.isValid(made))
        #expect(try run().deviceID() == made)
    }

    // MARK: The lists of a login

    @Test func theSessionsEndKeepsTheDeviceIDAndTheCountdownsAndDeletesTheLists() async throws {
        let state = try run()
        let (session, lists) = host(state)
        let device = state.deviceID()
        try await session.signIn(token: "T-1", username: "13800138000")
        lists.saveProducts(SavedProductPages(products: Array(DemoCatalog.products[0..<2]), page: 1, hasMore: true), pageSize: 20)
        lists.saveGroups(DemoCatalog.groups, menuUid: "m1")
        state.saveCooldowns(["13912345678": clock.wallTime + .seconds(60)])
        #expect(try keys().count == 2)
        try await session.logout()

        let next = try run()
        #expect(next.loadSession() == nil)
        #expect(next.deviceID() == device)
        #expect(next.savedCooldowns() == ["13912345678": clock.wallTime + .seconds(60)])
        #expect(try keys() == [])
        #expect(try StateStore(directory: directory).value(StoredState.listIndexKey) == nil)
    }

    @Test func theNextRunOfTheSameLoginReadsItsListsAndNoOtherLoginDoes() async throws {
        let pages = SavedProductPages(products: Array(DemoCatalog.products[0..<40]), page: 2, hasMore: true)
        do {
            let (session, lists) = host(try run())
            #expect(lists.savedProducts(pageSize: 20) == nil)
            // Logged out: nothing is saved.
            lists.saveProducts(pages, pageSize: 20)
            #expect(try keys() == [])
            try await session.signIn(token: "T-1", username: "13800138000")
            lists.saveProducts(pages, pageSize: 20)
            lists.saveGroups(DemoCatalog.groups, menuUid: "m/1 菜单")
        }
        let (session, lists) = host(try run())
        #expect(session.isLoggedIn)
        #expect(lists.savedProducts(pageSize: 20) == pages)
        #expect(lists.savedProducts(pageSize: 10) == nil)
        #expect(lists.savedGroups(menuUid: "m/1 菜单") == DemoCatalog.groups)
        #expect(lists.savedGroups(menuUid: "m2") == nil)
        // The same account logging in again is another login: the first one's lists are gone.
        try await session.signIn(token: "T-2", username: "13800138000")
        #expect(lists.savedProducts(pageSize: 20) == nil)
        #expect(try keys() == [])
    }

    @Test func atMostMaxListsAreKeptTheLeastRecentlySavedForgottenFirst() async throws {
        let (session, lists) = host(try run())
        try await session.signIn(token: "T-1", username: "13800138000")
        for number in 0...StoredState.maxLists {
            lists.saveGroups([MenuGroup(id: "g\(number)", name: "n", dishCount: 0)], menuUid: "m\(number)")
        }
        // m0 is saved again: it becomes the most recent, m1 is the oldest.
        lists.saveGroups([], menuUid: "m1")
        lists.saveGroups([], menuUid: "m0")
        lists.saveGroups([], menuUid: "extra")
        let (_, next) = host(try run())
        #expect(try keys().count == StoredState.maxLists)
        #expect(next.savedGroups(menuUid: "m0") == [])
        #expect(next.savedGroups(menuUid: "extra") == [])
        #expect(next.savedGroups(menuUid: "m2") == nil)
        #expect(next.savedGroups(menuUid: "m3") == nil)
        #expect(next.savedGroups(menuUid: "m1") == [])
    }

    @Test func aListTooLargeIsNotSavedAndAMenuIdTooLongNeither() async throws {
        let (session, lists) = host(try run())
        try await session.signIn(token: "T-1", username: "13800138000")
        let name = String(repeating: "名", count: StoredState.maxListBytes / 3)
        lists.saveGroups([MenuGroup(id: "g1", name: name, dishCount: 1)], menuUid: "m1")
        lists.saveGroups([], menuUid: String(repeating: "m", count: StoredState.maxMenuUidBytes + 1))
        #expect(try keys() == [])
    }

    @Test(arguments: [
        "not json at all", "{\"page\":1}", "{\"page\":9,\"hasMore\":true,\"products\":[]}",
        "{\"page\":1,\"hasMore\":true,\"products\":[{\"id\":\"p1\"}]}", "[1,2]", "",
    ])
    func aDamagedSavedListIsAbsent(value: String) async throws {
        let (session, lists) = host(try run())
        try await session.signIn(token: "T-1", username: "13800138000")
        let login = try #require(session.loginID)
        let store = try StateStore(directory: directory)
        try store.write([
            (StoredState.productsKey(login: login, pageSize: 20), value), (StoredState.groupsKey(login: login, menuUid: "m1"), value),
        ])
        #expect(lists.savedProducts(pageSize: 20) == nil)
        #expect(lists.savedGroups(menuUid: "m1") == nil)
        // A good save replaces the damaged value.
        lists.saveGroups(DemoCatalog.groups, menuUid: "m1")
        #expect(host(try run()).lists.savedGroups(menuUid: "m1") == DemoCatalog.groups)
    }

    @Test func aSavedValueOverTheBoundIsNotRead() async throws {
        let (session, lists) = host(try run())
        try await session.signIn(token: "T-1", username: "13800138000")
        let huge = "[" + String(repeating: " ", count: StoredState.maxListBytes) + "]"
        try StateStore(directory: directory).set(StoredState.groupsKey(login: try #require(session.loginID), menuUid: "m1"), huge)
        #expect(lists.savedGroups(menuUid: "m1") == nil)
    }

    // MARK: The lists of a connection's login (vmhost-web)

    @Test func aConnectionsLoginListsGoWithItsLogoutItsReplacementAndItsConnection() async throws {
        let state = try run()
        func connection() -> (AppSession, SessionLists) {
            let login = ConnectionLogin(state: state, storesLogin: false)
            let session = AppSession(storage: login)
            return (session, SessionLists(state: state, session: session, holder: login))
        }
        let pages = SavedProductPages(products: Array(DemoCatalog.products[0..<2]), page: 1, hasMore: true)
        let (first, firstLists) = connection()
        let (second, secondLists) = connection()
        try await first.signIn(token: "T-1", username: "13800138000")
        firstLists.saveProducts(pages, pageSize: 20)
        // Another connection, logged out or logged in as the same user, sees none of it.
        #expect(secondLists.savedProducts(pageSize: 20) == nil)
        try await second.signIn(token: "T-2", username: "13800138000")
        #expect(secondLists.savedProducts(pageSize: 20) == nil)
        secondLists.saveProducts(pages, pageSize: 20)
        #expect(firstLists.savedProducts(pageSize: 20) == pages)
        // A logout deletes its login's lists only; no store keeps a web login.
        try await first.logout()
        #expect(try keys().count == 1)
        #expect(state.loadSession() == nil)
        // Another login of the connection replaces the one before, with its lists.
        try await second.signIn(token: "T-3", username: "13912345678")
        #expect(try keys() == [])
        secondLists.saveProducts(pages, pageSize: 20)
        #expect(try keys().count == 1)
        // Closing the connection ends its login: its lists go.
        do {
            let (closing, closingLists) = connection()
            try await closing.signIn(token: "T-4", username: "13800138000")
            closingLists.saveProducts(pages, pageSize: 20)
            #expect(try keys().count == 2)
        }
        await EventLoop.shared.settle()
        #expect(try keys().count == 1)
    }

    /// With sessions kept for a restart (`vmhost-web --session-dir`): a connection's login is
    /// stored, kept at a stop, taken back by the session made again, and deleted by the next start
    /// once its grace period passed without the session coming back.
    @Test func aLoginKeptForARestartIsTakenBackOrDeletedOnceItsGracePassed() async throws {
        let grace = Duration.seconds(30)
        func connection(_ state: StoredState) -> (AppSession, ConnectionLogin) {
            let login = ConnectionLogin(state: state, storesLogin: true)
            return (AppSession(storage: login), login)
        }
        func logins() throws -> [String] { try keys(ConnectionLogin.keyPrefix) }
        // Two sessions logged in, kept at a stop.
        let stopping = try run()
        let (first, firstLogin) = connection(stopping)
        let (second, secondLogin) = connection(stopping)
        try await first.signIn(token: "T-1", username: "13800138000")
        try await second.signIn(token: "T-2", username: "13912345678")
        let firstID = try #require(first.loginID), secondID = try #require(second.loginID)
        first.keepForRestart()
        second.keepForRestart()
        _ = (firstLogin, secondLogin)
        #expect(try logins().filter { $0.hasSuffix(".kept") }.count == 2)
        // The restart, within the grace period: the sweep leaves both; the first comes back.
        await clock.advance(by: .seconds(10))
        let restarted = try run()
        ConnectionSessions(state: restarted, restartGrace: grace).endAll(.logout)
        #expect(try logins().count == 6)
        let (back, _) = connection(restarted)
        back.restore(loginID: firstID)
        #expect(back.loginID == firstID)
        #expect(back.token == "T-1")
        #expect(try logins().filter { $0.hasSuffix(".kept") } == [ConnectionLogin.keptKey(secondID)])
        // The next start past the grace period: the second never came back, its login goes; the
        // first, taken back, stays.
        await clock.advance(by: .seconds(25))
        _ = ConnectionSessions(state: try run(), restartGrace: grace)
        #expect(try logins() == [ConnectionLogin.tokenKey(firstID), ConnectionLogin.usernameKey(firstID)])
        // A start that keeps no session for a restart sweeps nothing, and stores no login.
        _ = ConnectionSessions(state: try run(), restartGrace: nil)
        #expect(try logins().count == 2)
        let unkept = AppSession(storage: ConnectionLogin(state: try run(), storesLogin: false))
        try await unkept.signIn(token: "T-3", username: "13800138000")
        #expect(try logins().count == 2)
    }

    // MARK: Several hosts on one directory

    @Test func aLoginAnotherHostReplacedSavesNothingMore() async throws {
        let (first, firstLists) = host(try run())
        try await first.signIn(token: "T-1", username: "13800138000")
        let (second, secondLists) = host(try run())
        #expect(second.loginID == first.loginID)
        // The second host logs out: the first one's lists are no longer made, nor shown.
        try await second.logout()
        firstLists.saveGroups(DemoCatalog.groups, menuUid: "m1")
        #expect(try keys() == [])
        #expect(firstLists.savedGroups(menuUid: "m1") == nil)
        // A logout of the first then leaves another host's newer login as it is.
        let (third, thirdLists) = host(try run())
        try await third.signIn(token: "T-3", username: "13912345678")
        thirdLists.saveGroups(DemoCatalog.groups, menuUid: "m1")
        try await first.logout()
        #expect(try run().loadSession()?.username == "13912345678")
        #expect(secondLists.savedGroups(menuUid: "m1") == nil)
        #expect(try keys().count == 1)
    }

    @Test func theCountdownsOfTwoHostsAreBothKept() throws {
        let first = try run()
        let second = try run()
        let deadline = clock.wallTime + .seconds(60)
        first.saveCooldowns(["13912345678": deadline])
        second.saveCooldowns(["13800138000": deadline + .seconds(5)])
        // A countdown that is over is dropped.
        second.saveCooldowns(["13700000000": clock.wallTime])
        #expect(try run().savedCooldowns() == ["13912345678": deadline, "13800138000": deadline + .seconds(5)])
    }

    /// Another connection to the directory's database, holding its write lock until released.
    func lockHeldElsewhere() throws -> StateStore {
        let other = try StateStore(directory: directory, busyTimeout: .milliseconds(10))
        try other.execute("BEGIN IMMEDIATE")
        return other
    }

    @Test func aWriteWaitsWhileAnotherProcessHoldsTheLockThenIsMade() async throws {
        let state = try run()
        let deadline = clock.wallTime + .seconds(60)
        let other = try lockHeldElsewhere()
        // Tried at once, found locked: it waits on the host's clock.
        state.saveCooldowns(["13912345678": deadline])
        #expect(log.contains("saving the SMS countdowns waits: another process holds the state database's lock"))
        await clock.advance(by: StateWriter.firstRetry)
        #expect(try other.value("login.smsCooldowns") == nil)
        try other.execute("ROLLBACK")
        await clock.advance(by: StateWriter.firstRetry * 2)
        #expect(try run().savedCooldowns() == ["13912345678": deadline])
        #expect(!log.contains("failed"))
    }

    @Test func aWriteStillLockedAtTheDeadlineFailsWithAWarningAndALogoutSaysSo() async throws {
        let state = try run()
        let (session, _) = host(state)
        try await session.signIn(token: "T-1", username: "13800138000")
        let other = try lockHeldElsewhere()
        state.saveCooldowns(["13912345678": clock.wallTime + .seconds(60)])
        // The logout waits behind the countdowns; the lock is held for the whole window.
        let logout = EventLoop.startTask { () async throws -> Void in try await session.logout() }
        await EventLoop.shared.settle()
        await clock.advance(by: StateWriter.retryWindow)
        let outcome = await logout.result
        try other.execute("ROLLBACK")
        guard case .failure(let error as BackendError) = outcome else {
            Issue.record("the logout did not fail: \(outcome)")
            return
        }
        #expect(error.kind == .timeout)
        #expect(session.isLoggedIn)
        #expect(try run().loadSession() != nil)
        #expect(log.contains("saving the SMS countdowns failed"))
        #expect(log.contains("deleting the stored login failed"))
        #expect(!log.contains("T-1"))
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

/// The lines a logger wrote, for tests that check what was logged.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }

    struct Handler: LogHandler {
        let lines: LogLines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            lines.lines.withLock { $0.append("\(event.level): \(event.message)") }
        }
    }
}
