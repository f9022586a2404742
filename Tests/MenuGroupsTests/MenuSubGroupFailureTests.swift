import Backend
import MenuGroups
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire

/// Every way a request can fail keeps the last good `groups` and reports once on `error`; driven by
/// the embedded backend's scripted outcomes, on the test's manual clock.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuSubGroupFailureTests {
    static let timeoutMs = 500

    nonisolated static let failures: [(script: ScriptedOutcome, error: BackendError?)] = [
        (.network, .network("could not connect to the server")),
        (.timeout, .timeout()),
        (.http(status: 500), .server(status: 500)),
        (.http(status: 404), .server(status: 404)),
        (.business(code: "3001", message: "菜单已锁定"), .business(code: "3001", message: "菜单已锁定")),
        // The decode message quotes the JSON parser; it is read from the backend itself below.
        (.malformed, nil),
    ]

    let clock = ManualClock()
    let backend: EmbeddedBackend
    let test: SubGroupTest

    init() {
        backend = EmbeddedBackend(clock: clock, timeout: .milliseconds(Self.timeoutMs))
        test = .subGroup(api: backend, clock: clock)
    }

    private func loaded() async {
        #expect(await test.execute("load").finished() == .succeeded(nil))
        // The backend answers at once: `loading` rises and falls in one turn, which no client sees.
        test.expect([
            .changed("loadState", "loading"), .changed("groups", Fixtures.rows(Fixtures.demo)), .changed("loadState", "loaded"),
        ])
    }

    /// `loading` while the run waited: only a timeout waits (for the clock); the other failures are
    /// answered in the turn the run starts, where `loading` rises and falls unseen.
    private func loading(_ outcome: ScriptedOutcome) -> [SubGroupTest.Record] {
        outcome == .timeout ? [.changed("loading", true), .changed("loading", false)] : []
    }

    /// What the backend throws for `outcome` (for `malformed`, whose message comes from the parser).
    private func expectedError(_ outcome: ScriptedOutcome, _ known: BackendError?) async -> BackendError {
        if let known { return known }
        let probe = EmbeddedBackend(clock: ManualClock())
        probe.script(.groupsList, [outcome])
        do {
            _ = try await probe.groups(menuUid: "m1")
        } catch let error as BackendError {
            return error
        } catch {}
        Issue.record("the probe backend did not fail")
        return .decode("")
    }

    /// Lets `run` end: a scripted timeout needs the clock moved past the backend's deadline.
    private func end(_ run: CommandRun, _ outcome: ScriptedOutcome) async -> CommandOutcome? {
        await test.settle()
        if outcome == .timeout { await test.advance(ms: Self.timeoutMs) }
        return await run.finished()
    }

    @Test(arguments: failures)
    func aFailedLoadKeepsTheGroups(outcome: ScriptedOutcome, known: BackendError?) async {
        await loaded()
        let expected = await expectedError(outcome, known)
        backend.script(.groupsList, [outcome])
        #expect(await end(test.execute("load"), outcome) == .failed(Fixtures.failure(expected, input: "load")))
        test.expect(
            [.changed("loadState", "loading")] + loading(outcome) + [
                .changed("lastError", Fixtures.error(expected, input: "load")), .changed("loadState", "failed"),
                .event("error", Fixtures.error(expected, input: "load")),
            ])
        #expect(test.value("groups") == Fixtures.rows(Fixtures.demo))
        await test.finish()
    }

    @Test(arguments: failures)
    func aFailedDeleteKeepsTheGroups(outcome: ScriptedOutcome, known: BackendError?) async {
        await loaded()
        let expected = await expectedError(outcome, known)
        backend.script(.groupsDelete, [outcome])
        #expect(await end(test.execute("delete", ["groupId": "g2"]), outcome) == .failed(Fixtures.failure(expected, input: "delete")))
        test.expect(loading(outcome) + [.event("error", Fixtures.error(expected, input: "delete"))])
        // A failed delete is no failed load: the list is still `loaded`.
        #expect(test.value("loadState") == "loaded")
        #expect(test.value("lastError") == .null)
        #expect(test.viewModel.groups.map(\.id) == ["g1", "g2", "g3", "g4"])
        await test.finish()
    }

    @Test func aFirstLoadThatFailsShowsNothingAndIsNotEmpty() async {
        backend.script(.groupsList, [.network])
        let failure = BackendError.network("could not connect to the server")
        #expect(await test.execute("load").finished() == .failed(Fixtures.failure(failure, input: "load")))
        test.expect([
            .changed("loadState", "loading"), .changed("lastError", Fixtures.error(failure, input: "load")),
            .changed("loadState", "failed"), .event("error", Fixtures.error(failure, input: "load")),
        ])
        #expect(test.value("isEmpty") == false)
        await test.finish()
    }

    @Test func anUnknownMenuIsAServerError() async {
        let test = SubGroupTest.subGroup(api: backend, menuUid: "nope", clock: clock)
        #expect(await test.execute("load").finished() == .failed(Fixtures.failure(.server(status: 404), input: "load")))
        test.expect([
            .changed("loadState", "loading"), .changed("lastError", Fixtures.error(.server(status: 404), input: "load")),
            .changed("loadState", "failed"), .event("error", Fixtures.error(.server(status: 404), input: "load")),
        ])
        await test.finish()
    }
}
