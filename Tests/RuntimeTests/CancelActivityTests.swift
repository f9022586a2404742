import VMHostEventLoop
import VMHostTesting
import Testing
import VMHostWire
@testable import VMHostRuntime

/// SPEC §6: a cancelled command's flags, its `isExecuting` and the activity it counted (`loading`),
/// are false when its caller hears of the cancellation, on every path that cancels, even though its
/// backend call is still unwinding.
@Suite("Cancelled activity")
@HostActor
struct CancelActivityTests {
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        /// The execution's own cancel: `$/cancelRequest`, EOF and shutdown go through it.
        case execution
        /// The command's cancelAll: a view-model's `cancel` input.
        case command
        /// A `latest` resend.
        case resend
        /// `vm.dispose`.
        case dispose
        var testDescription: String { rawValue }
    }

    @Test(arguments: Path.allCases)
    func theFlagsAreDownWhenTheCallerIsAnswered(path: Path) async throws {
        let recorder = ViewModelRecorder(kind: "Probe")
        let vm = recorder.keep(ProbeViewModel(args: .init(), context: recorder.context))
        let work = try #require(vm.context.input(named: "work") as? any AnyCommand)
        var seen: [(outcome: CommandOutcome, loading: Bool, busy: Bool, count: Int)] = []
        let execution = try work.execute(["ms": 100]) { outcome in
            seen.append((outcome, vm.loading.value, vm.busy.value, vm.context.activity.count))
        }
        await recorder.settle()
        #expect(vm.loading.value && vm.busy.value)
        _ = recorder.take()

        switch path {
        case .execution: execution.cancel()
        case .command: work.cancelAll()
        case .resend: try recorder.execute("work", ["ms": 100])
        case .dispose: vm.context.dispose()
        }
        try #require(seen.count == 1)
        #expect(seen[0].outcome == .cancelled)
        if path == .resend {
            // The cancelled run's activity is released; the resend holds `loading` up (as it holds
            // `busy`) from its start to its end, so the flag does not blink between the two runs.
            #expect(seen[0].loading && seen[0].count == 1)
            #expect(!recorder.take().contains(.changed("loading", false)))
            await recorder.settle()
            #expect(vm.context.activity.count == 1 && vm.loading.value)
            await recorder.advance(ms: 100)
            #expect(vm.context.activity.count == 0 && !vm.loading.value)
            #expect(recorder.outcomes == [.succeeded(1)])
        } else {
            #expect(!seen[0].loading && !seen[0].busy && seen[0].count == 0)
            #expect(recorder.take().contains(.changed("loading", false)))
            // The cancelled call unwinding later changes nothing.
            await recorder.settle()
            await recorder.advance(ms: 1000)
            #expect(vm.context.activity.count == 0)
            #expect(recorder.take() == [])
        }
    }

    @Test func concurrentRunsCountUntilEachEnds() async throws {
        let recorder = ViewModelRecorder(kind: "Probe")
        let vm = recorder.keep(ProbeViewModel(args: .init(), context: recorder.context))
        let first = try recorder.execute("parallel", ["ms": 100])
        try recorder.execute("parallel", ["ms": 200])
        await recorder.settle()
        #expect(vm.context.activity.count == 2)
        first.cancel()
        #expect(vm.context.activity.count == 1 && vm.loading.value)
        await recorder.advance(ms: 200)
        #expect(vm.context.activity.count == 0 && !vm.loading.value)
        #expect(recorder.outcomes == [.cancelled, .succeeded(200)])
    }
}
