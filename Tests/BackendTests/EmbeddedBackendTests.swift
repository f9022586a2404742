import Backend
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import Testing
@_spi(Transport) import VMHostWire

/// The embedded backend's own behaviour: scripting, latency, timeouts and cancellation on the host
/// clock. (What it shares with the HTTP client is in `APIScenarioTests`.)
///
/// A call that the clock wakes is awaited (`task.value`) before its result is checked: a task
/// resumed from a continuation comes back to the host thread through the global executor, so
/// `ManualClock.advance` may return just before it has run. Checks that nothing happened *before*
/// a deadline need no such wait: nothing could have woken the call.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct EmbeddedBackendTests {
    let clock = ManualClock()
    let backend: EmbeddedBackend

    init() {
        backend = EmbeddedBackend(clock: clock)
    }

    @Test func withNoLatencyACallNeverWaitsOnTheClock() async throws {
        let page = try await backend.products(page: 1, pageSize: 20)
        #expect(page.items.count == 20)
        #expect(clock.pendingCount == 0)
        #expect(clock.now == .zero)
    }

    @Test func latencyDelaysEveryCallOnTheHostClock() async throws {
        backend.latency = .milliseconds(300)
        var page: Page<Product>?
        let task = EventLoop.startTask { page = try await backend.products(page: 2, pageSize: 20) }
        await clock.advance(by: .milliseconds(299))
        #expect(page == nil)
        await clock.advance(by: .milliseconds(1))
        try await task.value
        #expect(page?.info.index == 2)
    }

    @Test func latencyIsSetFromControlParams() throws {
        try backend.setLatency(params: ["ms": 250])
        #expect(backend.latency == .milliseconds(250))
        #expect(throws: ScriptError.self) { try backend.setLatency(params: ["ms": -1]) }
        #expect(throws: ScriptError.self) { try backend.setLatency(params: ["ms": "5"]) }
        #expect(throws: ScriptError.self) { try backend.setLatency(params: [:]) }
    }

    @Test(arguments: [
        ("network", BackendError.Kind.network, JSON.null),
        ("http:500", .server, 500),
        ("http:404", .server, 404),
        ("business:1009:余额不足", .business, "1009"),
        ("malformed", .decode, nil),
    ])
    func everyFailingOutcome(outcome: String, kind: BackendError.Kind, code: JSON) async throws {
        try backend.script(endpoint: "products", outcomes: [outcome])
        let error = await backendError { _ = try await backend.products(page: 1, pageSize: 20) }
        #expect(error?.kind == kind)
        #expect(error?.code == code)
        // Used up: the next call is served normally.
        #expect(try await backend.products(page: 1, pageSize: 20).items.count == 20)
    }

    @Test func businessOutcomeKeepsColonsInItsMessage() async throws {
        try backend.script(endpoint: "auth.login", outcomes: ["business:E1:请稍后再试: 系统维护"])
        let error = await backendError { _ = try await backend.login(username: "13800138000", password: "123456") }
        #expect(error == .business(code: "E1", message: "请稍后再试: 系统维护"))
        #expect(backend.token == nil)
    }

    @Test func okOutcomeServesNormally() async throws {
        try backend.script(endpoint: "groups.list", outcomes: ["ok"])
        #expect(try await backend.groups(menuUid: "m1").count == 4)
    }

    @Test func timeoutOutcomeHangsForTheTimeoutThenFails() async throws {
        try backend.script(endpoint: "groups.list", outcomes: ["timeout"])
        var error: BackendError?
        let task = EventLoop.startTask { error = await backendError { _ = try await backend.groups(menuUid: "m1") } }
        await clock.advance(by: .milliseconds(14999))
        #expect(error == nil)
        await clock.advance(by: .milliseconds(1))
        await task.value
        #expect(error?.kind == .timeout)
    }

    @Test func delayOutcomeWaitsThenServes() async throws {
        try backend.script(endpoint: "groups.create", outcomes: ["delay:1000"])
        var group: MenuGroup?
        let task = EventLoop.startTask { group = try await backend.createGroup(menuUid: "m1", name: "新品") }
        await clock.advance(by: .milliseconds(999))
        #expect(group == nil)
        #expect(backend.server.menus["m1"]?.count == 4)
        await clock.advance(by: .milliseconds(1))
        try await task.value
        #expect(group == MenuGroup(id: "g5", name: "新品", dishCount: 0))
    }

    @Test func aDelayPastTheTimeoutTimesOutAtTheTimeout() async throws {
        backend.latency = .milliseconds(5000)
        try backend.script(endpoint: "products", outcomes: ["delay:10000"])
        var error: BackendError?
        let task = EventLoop.startTask { error = await backendError { _ = try await backend.products(page: 1, pageSize: 20) } }
        await clock.advance(by: .milliseconds(14999))
        #expect(error == nil)
        await clock.advance(by: .milliseconds(1))
        await task.value
        #expect(error?.kind == .timeout)
    }

    @Test func queuedOutcomesApplyOncePerCallInOrder() async throws {
        try backend.script(endpoint: "products", outcomes: ["http:500", "business:7:x"])
        try backend.script(endpoint: "products", outcomes: ["network"])
        #expect(backend.queuedOutcomes(for: .products) == [.http(status: 500), .business(code: "7", message: "x"), .network])
        var kinds: [BackendError.Kind?] = []
        for _ in 0..<3 {
            kinds.append(await backendError { _ = try await backend.products(page: 1, pageSize: 20) }?.kind)
        }
        #expect(kinds == [.server, .business, .network])
        #expect(try await backend.products(page: 1, pageSize: 20).items.count == 20)
        // Other endpoints were never affected.
        #expect(backend.queuedOutcomes(for: .groupsList).isEmpty)
    }

    @Test func outcomesGoToCallsInTheOrderTheyStarted() async throws {
        try backend.script(endpoint: "groups.list", outcomes: ["delay:100", "http:503"])
        var first: [MenuGroup]?
        var second: BackendError?
        let a = EventLoop.startTask { first = try await backend.groups(menuUid: "m1") }
        let b = EventLoop.startTask { second = await backendError { _ = try await backend.groups(menuUid: "m1") } }
        await EventLoop.shared.settle()
        // The second call got the second outcome and failed at once; the first still waits.
        #expect(first == nil)
        #expect(second == .server(status: 503))
        await clock.advance(by: .milliseconds(100))
        try await a.value
        await b.value
        #expect(first?.count == 4)
    }

    @Test func aFailedScriptedCallChangesNoState() async throws {
        try backend.script(endpoint: "groups.delete", outcomes: ["http:500", "network", "malformed"])
        for _ in 0..<3 { _ = await backendError { try await backend.deleteGroup(menuUid: "m1", groupId: "g1") } }
        #expect(try await backend.groups(menuUid: "m1").map(\.id) == ["g1", "g2", "g3", "g4"])
    }

    @Test func cancellationDuringADelayThrowsCancellationAndChangesNothing() async throws {
        try backend.script(endpoint: "groups.delete", outcomes: ["delay:1000"])
        let task = EventLoop.startTask { try await backend.deleteGroup(menuUid: "m1", groupId: "g1") }
        await EventLoop.shared.settle()
        #expect(clock.pendingCount == 1)
        task.cancel()
        #expect(isCancellation(await task.result))
        #expect(clock.pendingCount == 0)
        await clock.advance(by: .milliseconds(2000))
        #expect(backend.server.menus["m1"]?.map(\.id) == ["g1", "g2", "g3", "g4"])
    }

    @Test func cancellationDuringLatencyOrATimeoutIsCancellationNotAnError() async throws {
        backend.latency = .milliseconds(500)
        let login = EventLoop.startTask { try await backend.login(username: "13800138000", password: "123456") }
        await EventLoop.shared.settle()
        login.cancel()
        #expect(isCancellation(await login.result))
        #expect(backend.token == nil)

        backend.latency = .zero
        try backend.script(endpoint: "products", outcomes: ["timeout"])
        let products = EventLoop.startTask { try await backend.products(page: 1, pageSize: 20) }
        await EventLoop.shared.settle()
        products.cancel()
        #expect(isCancellation(await products.result))
    }

    @Test func aCallFromAnAlreadyCancelledTaskNeverReachesTheServer() async throws {
        let task = EventLoop.startTask {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await backend.createGroup(menuUid: "m1", name: "不该出现")
        }
        #expect(isCancellation(await task.result))
        #expect(backend.server.menus["m1"]?.count == 4)
    }

    @Test func scriptErrorsNameWhatWasWrongAndListTheChoices() {
        let endpoint = #expect(throws: ScriptError.self) { try backend.script(endpoint: "product", outcomes: ["ok"]) }
        #expect(endpoint?.parameter == "endpoint")
        #expect(endpoint?.message.contains("\"product\"") == true)
        #expect(endpoint?.message.contains("groups.rename") == true)

        for bad in ["oops", "http:200", "http:abc", "http:", "business:", "business::msg", "delay:-1", "delay:x", "OK"] {
            let error = #expect(throws: ScriptError.self) { try backend.script(endpoint: "products", outcomes: ["ok", bad]) }
            #expect(error?.parameter == "outcomes")
            #expect(error?.message.contains("\"\(bad)\"") == true)
            #expect(error?.message.contains("business:<code>:<message>") == true)
        }
        // Nothing was queued by a rejected script, not even its valid outcomes.
        #expect(backend.queuedOutcomes(for: .products).isEmpty)
    }

    @Test func scriptFromControlParams() async throws {
        try backend.script(params: ["endpoint": "auth.smsCode", "outcomes": ["network", "delay:5"]])
        #expect(backend.queuedOutcomes(for: .authSMSCode) == [.network, .delay(.milliseconds(5))])
        #expect(throws: ScriptError.self) { try backend.script(params: ["endpoint": "auth.smsCode"]) }
        #expect(throws: ScriptError.self) { try backend.script(params: ["outcomes": []]) }
        let error = #expect(throws: ScriptError.self) { try backend.script(params: ["endpoint": "products", "outcomes": [1]]) }
        #expect(error?.message == "outcomes[0]: expected a string, got a number")
    }

    @Test func outcomesPrintAsTheyAreWritten() throws {
        for text in ["ok", "timeout", "network", "http:502", "business:1:a:b", "malformed", "delay:250"] {
            #expect(try ScriptedOutcome(parsing: text).description == text)
        }
        #expect(EmbeddedBackend.endpointNames == [
            "products", "auth.login", "auth.smsCode", "auth.loginCode", "groups.list", "groups.create",
            "groups.rename", "groups.delete",
        ])
    }

    @Test func resetRestoresTheDemoData() async throws {
        _ = try await backend.login(username: "13800138000", password: "123456")
        try await backend.deleteGroup(menuUid: "m1", groupId: "g2")
        backend.latency = .milliseconds(10)
        try backend.script(endpoint: "products", outcomes: ["network"])
        backend.reset()
        #expect(backend.token == nil)
        #expect(backend.latency == .zero)
        #expect(backend.queuedOutcomes(for: .products).isEmpty)
        #expect(try await backend.groups(menuUid: "m1").count == 4)
        #expect(try await backend.login(username: "13800138000", password: "123456").token == "demo-token-1")
    }
}
