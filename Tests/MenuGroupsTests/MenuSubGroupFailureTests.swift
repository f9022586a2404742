import Backend
import VMHostEventLoop
import MenuGroups
import VMHostRuntime
import VMHostTesting
import Testing
import VMHostWire

/// Every way a request can fail keeps the last good `groups` and reports once on `error`; driven by
/// the embedded backend's scripted outcomes, on the recorder's manual clock.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuSubGroupFailureTests {
    static let timeoutMs = 500

    nonisolated static let failures: [(script: ScriptedOutcome, error: DomainError?)] = [
        (.network, .network("could not connect to the server")),
        (.timeout, .timeout()),
        (.http(status: 500), .server(status: 500)),
        (.http(status: 404), .server(status: 404)),
        (.business(code: "3001", message: "菜单已锁定"), .business(code: "3001", message: "菜单已锁定")),
        // The decode message quotes the JSON parser; it is read from the backend itself below.
        (.malformed, nil),
    ]

    let recorder = ViewModelRecorder(kind: "MenuSubGroup")
    let backend: EmbeddedBackend
    let viewModel: MenuSubGroupViewModel
    let keeper = Keeper()

    init() {
        backend = EmbeddedBackend(clock: recorder.clock, timeout: .milliseconds(Self.timeoutMs))
        viewModel = recorder.keep(MenuSubGroupViewModel(args: .init(menuUid: "m1"), context: recorder.context, api: backend))
    }

    private func loaded() async throws {
        try recorder.execute("load")
        await recorder.finished(0)
        #expect(recorder.take() == [
            .changed("loadState", "loading"), .changed("loading", true), .changed("loading", false),
            .changed("groups", Fixtures.rows(Fixtures.demo)), .changed("loadState", "loaded"),
        ])
    }

    /// What the backend throws for `outcome` (for `malformed`, whose message comes from the parser).
    private func expectedError(_ outcome: ScriptedOutcome, _ known: DomainError?) async -> DomainError {
        if let known { return known }
        let probe = EmbeddedBackend(clock: recorder.clock)
        probe.script(.groupsList, [outcome])
        do {
            _ = try await probe.groups(menuUid: "m1")
        } catch let error as DomainError {
            return error
        } catch {}
        Issue.record("the probe backend did not fail")
        return .decode("")
    }

    private func finish(_ outcome: ScriptedOutcome) async {
        await recorder.settle()
        if outcome == .timeout { await recorder.advance(ms: Self.timeoutMs) }
        await recorder.finished(recorder.outcomes.count - 1)
    }

    @Test(arguments: failures)
    func aFailedLoadKeepsTheGroups(outcome: ScriptedOutcome, known: DomainError?) async throws {
        try await loaded()
        let expected = await expectedError(outcome, known)
        backend.script(.groupsList, [outcome])
        try recorder.execute("load")
        await finish(outcome)
        #expect(recorder.take() == [
            .changed("loadState", "loading"), .changed("loading", true), .changed("loading", false),
            .changed("lastError", Fixtures.error(expected, input: "load")), .changed("loadState", "failed"),
            .event("error", Fixtures.error(expected, input: "load")),
        ])
        let failed = expected.reaching(input: "load", locale: .zhHans)
        #expect(recorder.outcomes.last == .failed(failed))
        #expect(recorder.value("groups") == Fixtures.rows(Fixtures.demo))
    }

    @Test(arguments: failures)
    func aFailedDeleteKeepsTheGroups(outcome: ScriptedOutcome, known: DomainError?) async throws {
        try await loaded()
        let expected = await expectedError(outcome, known)
        backend.script(.groupsDelete, [outcome])
        try recorder.execute("delete", ["groupId": "g2"])
        await finish(outcome)
        #expect(recorder.take() == [
            .changed("loading", true), .changed("loading", false), .event("error", Fixtures.error(expected, input: "delete")),
        ])
        let failed = expected.reaching(input: "delete", locale: .zhHans)
        // A failed delete is no failed load: the list is still `loaded`.
        #expect(recorder.value("loadState") == "loaded")
        #expect(recorder.value("lastError") == .null)
        #expect(recorder.outcomes.last == .failed(failed))
        #expect(viewModel.groups.value.map(\.id) == ["g1", "g2", "g3", "g4"])
    }

    @Test func aFirstLoadThatFailsShowsNothingAndIsNotEmpty() async throws {
        backend.script(.groupsList, [.network])
        try recorder.execute("load")
        await recorder.finished(0)
        #expect(recorder.take() == [
            .changed("loadState", "loading"), .changed("loading", true), .changed("loading", false),
            .changed("lastError", Fixtures.error(.network("could not connect to the server"), input: "load")),
            .changed("loadState", "failed"),
            .event("error", Fixtures.error(.network("could not connect to the server"), input: "load")),
        ])
        #expect(recorder.value("isEmpty") == false)
    }

    @Test func anUnknownMenuIsAServerError() async throws {
        let recorder = ViewModelRecorder(kind: "MenuSubGroup")
        keeper.keep(recorder.keep(MenuSubGroupViewModel(args: .init(menuUid: "nope"), context: recorder.context, api: backend)))
        try recorder.execute("load")
        await recorder.finished(0)
        #expect(recorder.take() == [
            .changed("loadState", "loading"), .changed("loading", true), .changed("loading", false),
            .changed("lastError", Fixtures.error(.server(status: 404), input: "load")), .changed("loadState", "failed"),
            .event("error", Fixtures.error(.server(status: 404), input: "load")),
        ])
    }
}
