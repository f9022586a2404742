import Testing
import VMHostTesting

private enum Endpoint: String, Sendable { case fetch, store }

private struct Offline: DomainFailure, Equatable {
    func domainError(in locale: AppLocale) -> DomainError { DomainError(kind: "network", message: "offline", detail: "offline") }
}

/// A profile whose load sets two fields that a derived output checks together.
@HostActor
private final class Profile: ViewModel {
    static let kind = "Profile"
    @Output private(set) var name = ""
    @Output private(set) var email = ""
    @Derived({ !$0.name.isEmpty && !$0.email.contains("@") ? "the email is invalid" : "" }) var problem: String
    let calls = StubCalls<Endpoint>()
    let load = Command(.latest) { vm in
        vm.name = "Ada"
        vm.email = "ada@example.org"
        // A wait in the middle: the turn ends here, with both fields set.
        vm.name = try await vm.calls.perform(.fetch, as: String.self)
        vm.name = "Ada"
        vm.email = "ada@example.org"
    }
}

/// The kit's failure messages are asserted as values: the issues it records are captured
/// (``KitIssues``), never shown as known issues.
@Suite("Test kit", .capturingKitIssues)
@HostActor
struct TestKitTests {
    @Test func aHistoryHasOneStatePerTurnAsTheWireSends() async {
        let test = ViewModelTest { Profile() }
        let run = test.send(\.load)
        let call = await test.viewModel.calls.call(.fetch)
        // Setting `name` before `email` made `problem` say the email is invalid for a moment, inside
        // the turn: no client saw it, so the history does not have it.
        test.expect([.changed(\.$name, "Ada"), .changed(\.$email, "ada@example.org")])
        call.succeed("Ada Lovelace")
        #expect(await run.finished() == .succeeded(nil))
        // `name` changed twice and ended where it began: no change.
        test.expect([])
        await test.finish()
    }

    @Test func aStubCallIsHeldUntilTheTestAnswersIt() async throws {
        let stub = StubCalls<Endpoint>()
        let task = Task { @HostActor in try await stub.perform(.fetch, ["id": "a"], as: Int.self) }
        let call = await stub.call(.fetch)
        #expect(call.isPending)
        #expect(call.arguments == ["id": "a"])
        let pending = await KitIssues.comments { stub.verifyNothingPending(sourceLocation: #_sourceLocation) }
        #expect(pending.count == 1 && pending.allSatisfy { $0.hasPrefix("calls still pending: fetch") }, "\(pending)")
        #expect(call.succeed(42))
        #expect(try await task.value == 42)
        #expect(call.succeed(43) == false)
        stub.verifyNothingPending(sourceLocation: #_sourceLocation)
    }

    @Test func aStubCallFailsCancelsOrIsAnsweredWithTheWrongType() async throws {
        let stub = StubCalls<Endpoint>()
        let failing = Task { @HostActor in try await stub.perform(.store, as: Void.self) }
        await stub.call(.store).fail(Offline())
        await #expect(throws: Offline()) { try await failing.value }

        let cancelled = Task { @HostActor in try await stub.perform(.fetch, as: Int.self) }
        let call = await stub.call(.fetch)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(call.wasCancelled)

        stub.answerNext(.fetch, with: .success("text"))
        await #expect(throws: StubMismatch.self) { try await stub.perform(.fetch, as: Int.self) }
        #expect(stub.calls.count == 3)
    }

    @Test func aCallNeverMadeFailsWithinTheTimeoutNamingTheCallsMade() async {
        let stub = StubCalls<Endpoint>()
        stub.timeout = .milliseconds(50)
        stub.answerNext(.fetch, with: .success(1))
        _ = try? await stub.perform(.fetch, as: Int.self)
        let waited = await KitIssues.comments { _ = await stub.call(.store) }
        #expect(waited == ["waited 0.05 seconds for call 1 of store; calls made: fetch {}"])
    }

    @Test func expectComparesTheWholeHistoryAndFailsAtTheCallersLine() async {
        let test = ViewModelTest { Form() }
        test.set(\.$first, "a")
        test.set(\.$first, "b")
        let line = #line + 1
        let issues = await KitIssues.capture { test.expect([.changed(\.$first, "b")]) }
        #expect(issues.map(\.sourceLocation?.line) == [line])
        #expect(issues.flatMap { $0.comments.map(\.rawValue) } == [
            """
            the history differs at entry 0: expected changed first = "b", recorded changed first = "a".
            expected:
              changed first = "b"
            recorded:
              changed first = "a"
              changed stage = "half"
              changed first = "b"
            """,
        ])
        test.set(\.$first, "")
        test.expect([.changed("first", ""), .changed("stage", "empty")])
        await test.finish()
    }

    @Test func expectNamesTheFirstEntryThatDiffersAndAMisspelledOutput() async {
        let test = ViewModelTest { Form() }
        test.set(\.$first, "a")
        let misspelled = await KitIssues.comments { test.expect([.changed("first", "a"), .changed("stgae", "half")]) }
        #expect(misspelled.count == 1)
        #expect(misspelled.first?.hasPrefix("""
            the history differs at entry 1: expected changed stgae = "half", recorded changed stage = "half".
            Form has no property output "stgae" (property outputs: first, valid, stage).
            """) == true)
        test.set(\.$first, "")
        let missing = await KitIssues.comments {
            test.expect([.changed("first", ""), .changed("stage", "empty"), .event("ping", 1)])
        }
        #expect(missing.count == 1)
        #expect(missing.first?.hasPrefix("the history differs at entry 2: expected event ping 1, recorded nothing more.\nexpected:") == true)
        await test.finish()
    }

    @Test func anUnknownNameFailsWithTheNamesThatExist() async {
        let test = ViewModelTest { Form() }
        let unknown = await KitIssues.comments {
            test.send("frist", "x")
            _ = test.value("vaild")
            _ = test.execute("go")
        }
        #expect(unknown.starts(with: [
            "Form: no value or trigger input \"frist\" (inputs: first, second, send)",
            "Form: no property output \"vaild\" (properties: first, valid, stage)",
            "Form: no command input \"go\" (inputs: first, second, send)",
        ]), "\(unknown)")
        await test.finish()
    }

    @Test func aCommandIsAwaitedByItsHandle() async {
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let run = test.send(\.work, ["ms": 10])
        #expect(run.outcome == nil)
        await test.advance(ms: 10)
        #expect(await run.finished() == .succeeded(1))
        #expect(run.value == 1)
        _ = test.take()
        await test.finish()
    }

    @Test func aRunThatNeverEndsFailsItsWaitInSeconds() async {
        let test = ViewModelTest(timeout: .milliseconds(50)) { ProbeViewModel(args: .init()) }
        let run = test.send(\.work, ["ms": 10_000])
        let waited = await KitIssues.comments { _ = await run.finished() }
        #expect(waited == ["waited 0.05 seconds for work to end"])
        let unfinished = await KitIssues.comments { await test.finish() }
        #expect(unfinished.count == 4, "\(unfinished)")
        #expect(unfinished.contains { $0.hasPrefix("Probe: output nobody asserted: changed busy = true; changed loading = true") })
        #expect(unfinished.contains("Probe: still running: work"))
        #expect(unfinished.contains("Probe: commands sent with no outcome yet: work"))
        #expect(unfinished.contains("Probe: timers still armed: 1"))
    }

    @Test func aTestSettlesOnItsOwnWorkNotOnAnothers() async {
        // Work elsewhere on the host thread that stays busy for a long while: 100,000 turns.
        var turns = 0
        let busy = Task { @HostActor in
            while turns < 100_000 && !Task.isCancelled {
                turns += 1
                await Task.yield()
            }
        }
        defer { busy.cancel() }
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let run = test.send(\.once)
        await test.settle()
        #expect(test.viewModel.loading)
        await test.advance(ms: 100)
        #expect(run.value == "done")
        // The test went on while the other work was far from done.
        #expect(turns < 100_000)
        _ = test.take()
        await test.finish()
    }
}
