@_spi(Transport) import VMHostEventLoop
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@testable import VMHostRuntime

/// SPEC §6: a cancelled command's flags, its `isExecuting` and the activity it counted (`loading`),
/// are false when its caller hears of the cancellation, on every path that cancels, even though its
/// backend call is still unwinding.
@Suite("Cancelled activity")
@HostActor
struct CancelActivityTests {
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        /// The run's own cancel: `$/cancelRequest`, EOF and shutdown go through it.
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
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let work = try #require(test.context.input(named: "work") as? any AnyCommand)
        var seen: [(outcome: CommandOutcome, loading: Bool, busy: Bool, count: Int)] = []
        let execution = try work.execute(["ms": 100]) { [weak test] outcome in
            guard let test else { return }
            seen.append((outcome, test.viewModel.loading, test.viewModel.busy, test.context.activity.count))
        }
        await test.settle()
        #expect(test.viewModel.loading && test.viewModel.busy)
        _ = test.take()

        var resend: CommandRun?
        switch path {
        case .execution: execution.cancel()
        case .command: work.cancelAll()
        case .resend: resend = test.send(\.work, ["ms": 100])
        case .dispose: test.context.dispose()
        }
        try #require(seen.count == 1)
        #expect(seen[0].outcome == .cancelled)
        if path == .resend {
            // The cancelled run's activity is handed to the resend, which holds `loading` up (as
            // `busy` is held) from its start to its end: the flag does not blink between the two.
            #expect(seen[0].loading && seen[0].count == 1)
            #expect(!test.take().contains(.changed("loading", false)))
            await test.settle()
            #expect(test.context.activity.count == 1 && test.viewModel.loading)
            await test.advance(ms: 100)
            #expect(test.context.activity.count == 0 && !test.viewModel.loading)
            #expect(resend?.outcome == .succeeded(1))
        } else {
            #expect(!seen[0].loading && !seen[0].busy && seen[0].count == 0)
            #expect(test.take().contains(.changed("loading", false)))
            // The cancelled call unwinding later changes nothing.
            await test.settle()
            await test.advance(ms: 1000)
            #expect(test.context.activity.count == 0)
            #expect(test.take() == [])
        }
        _ = test.take()
        await test.finish()
    }

    @Test func concurrentRunsCountUntilEachEnds() async {
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let first = test.send(\.parallel, ["ms": 100])
        let second = test.send(\.parallel, ["ms": 200])
        await test.settle()
        #expect(test.context.activity.count == 2)
        first.cancel()
        #expect(test.context.activity.count == 1 && test.viewModel.loading)
        await test.advance(ms: 200)
        #expect(test.context.activity.count == 0 && !test.viewModel.loading)
        #expect(first.outcome == .cancelled && second.outcome == .succeeded(200))
        _ = test.take()
        await test.finish()
    }
}
