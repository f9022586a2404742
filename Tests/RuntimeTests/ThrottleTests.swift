import Testing
import VMHostTesting

/// A text throttled three ways, each sent value kept in order.
@HostActor
private final class Typing: ViewModel {
    static let kind = "Typing"
    @Input var text = ""
    @Tracked var both: [String] = []
    @Tracked var first: [String] = []
    @Tracked var last: [String] = []

    init() {
        observe($text.throttle(for: .milliseconds(300))) { vm, text in vm.both.append(text) }
        observe($text.throttle(for: .milliseconds(300), sending: .first)) { vm, text in vm.first.append(text) }
        observe($text.throttle(for: .milliseconds(300), sending: .last)) { vm, text in vm.last.append(text) }
    }
}

@Suite("Throttle")
@HostActor
struct ThrottleTests {
    /// Types "a" at 0 ms, "b" at 100, "c" at 200 and "d" at 400 (intervals of 300 ms).
    @Test func eachModeSendsWhatItSaysOnTheClock() async {
        let test = ViewModelTest { Typing() }
        test.set(\.$text, "a")
        // The first value of an interval goes at once, except with `.last`.
        #expect(test.viewModel.both == ["a"] && test.viewModel.first == ["a"] && test.viewModel.last == [])
        await test.advance(ms: 100)
        test.set(\.$text, "b")
        await test.advance(ms: 100)
        test.set(\.$text, "c")
        #expect(test.viewModel.both == ["a"] && test.viewModel.first == ["a"] && test.viewModel.last == [])

        // 300 ms: the interval ends; the latest of it, "c", goes with `.firstAndLast` and `.last`.
        await test.advance(ms: 100)
        #expect(test.viewModel.both == ["a", "c"])
        #expect(test.viewModel.first == ["a"])
        #expect(test.viewModel.last == ["c"])

        // 400 ms: `.firstAndLast` started its next interval at 300 and holds "d" for its end;
        // `.first` had none running and sends "d" at once; `.last` starts one.
        await test.advance(ms: 100)
        test.set(\.$text, "d")
        #expect(test.viewModel.both == ["a", "c"])
        #expect(test.viewModel.first == ["a", "d"])
        #expect(test.viewModel.last == ["c"])

        await test.advance(ms: 200)   // 600 ms
        #expect(test.viewModel.both == ["a", "c", "d"])
        #expect(test.viewModel.last == ["c"])
        await test.advance(ms: 100)   // 700 ms
        #expect(test.viewModel.last == ["c", "d"])
        #expect(test.viewModel.first == ["a", "d"])

        // Quiet from here: every interval ends, and no value is sent twice.
        await test.advance(ms: 1_000)
        #expect(test.viewModel.both == ["a", "c", "d"])
        #expect(test.viewModel.first == ["a", "d"])
        #expect(test.viewModel.last == ["c", "d"])
        #expect(test.clock.pendingCount == 0)
        _ = test.take()
        await test.finish()
    }

    @Test func aSteadyStreamSendsOneValuePerInterval() async {
        let test = ViewModelTest { Typing() }
        // A keystroke every 100 ms for a second.
        for index in 0..<10 {
            test.set(\.$text, String(repeating: "x", count: index + 1))
            await test.advance(ms: 100)
        }
        await test.advance(ms: 1_000)
        let lengths = { (values: [String]) in values.map(\.count) }
        #expect(lengths(test.viewModel.both) == [1, 3, 6, 9, 10])
        #expect(lengths(test.viewModel.first) == [1, 4, 7, 10])
        #expect(lengths(test.viewModel.last) == [3, 6, 9, 10])
        _ = test.take()
        await test.finish()
    }
}
