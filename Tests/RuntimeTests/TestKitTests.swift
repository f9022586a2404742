import Testing
import VMHostTesting

private enum Endpoint: String, Sendable { case fetch, store }

@Suite("Test kit")
@HostActor
struct TestKitTests {
    @Test func aStubCallIsHeldUntilTheTestAnswersIt() async throws {
        let stub = StubCalls<Endpoint>()
        let task = Task { @HostActor in try await stub.perform(.fetch, ["id": "a"], as: Int.self) }
        let call = await stub.call(.fetch)
        #expect(call.isPending)
        #expect(call.arguments == ["id": "a"])
        #expect(throws: TestKitFailure.self) { try stub.verifyNothingPending() }
        #expect(call.succeed(42))
        #expect(try await task.value == 42)
        #expect(call.succeed(43) == false)
        try stub.verifyNothingPending()
    }

    @Test func aStubCallFailsCancelsOrIsAnsweredWithTheWrongType() async throws {
        let stub = StubCalls<Endpoint>()
        let failing = Task { @HostActor in try await stub.perform(.store, as: Void.self) }
        await stub.call(.store).fail(DomainError(kind: .network, message: "offline"))
        await #expect(throws: DomainError(kind: .network, message: "offline")) { try await failing.value }

        let cancelled = Task { @HostActor in try await stub.perform(.fetch, as: Int.self) }
        let call = await stub.call(.fetch)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(call.wasCancelled)

        stub.answerNext(.fetch, with: .success("text"))
        await #expect(throws: StubMismatch.self) { try await stub.perform(.fetch, as: Int.self) }
        #expect(stub.calls.count == 3)
    }

    @Test func expectComparesTheWholeHistory() throws {
        let recorder = ViewModelRecorder()
        let count = recorder.context.property("count", 0)
        count.value = 1
        count.value = 2
        let failure = try #require(throws: TestKitFailure.self) { try recorder.expect([.changed("count", 2)]) }
        #expect(failure.description == """
            the history differs.
            expected:
              changed count = 2
            recorded:
              changed count = 1
              changed count = 2
            """)
        count.value = 3
        try recorder.expect([.changed("count", 3)])
        try recorder.finish()
    }

    @Test func finishFailsOnUnassertedOutputRunningWorkAndArmedTimers() async throws {
        let recorder = ViewModelRecorder(kind: "Probe")
        recorder.keep(ProbeViewModel(args: .init(), context: recorder.context))
        try recorder.execute("once")
        await recorder.settle()
        let failure = try #require(throws: TestKitFailure.self) { try recorder.finish() }
        #expect(failure.description.contains("output nobody asserted: changed loading = true"))
        #expect(failure.description.contains("commands still running: once"))
        #expect(failure.description.contains("executions without an outcome: 0"))
        #expect(failure.description.contains("timers still armed: 1"))
        recorder.context.dispose()
    }
}
