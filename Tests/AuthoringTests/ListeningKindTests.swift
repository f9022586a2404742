import Synchronization
import Testing
import VMHostTesting

/// A push channel of the tests: the stream a thread's screen listens to, with what ended it.
final class PushChannel: Sendable {
    let stream: AsyncThrowingStream<String, any Error>
    let continuation: AsyncThrowingStream<String, any Error>.Continuation
    /// Set when the stream's consumer went away (its iterator cancelled or the stream finished).
    private let terminated = Mutex(false)

    init() {
        (stream, continuation) = AsyncThrowingStream.makeStream()
        continuation.onTermination = { [weak self] _ in self?.terminated.withLock { $0 = true } }
    }

    var isTerminated: Bool { terminated.withLock { $0 } }
}

struct ChannelClosed: DomainFailure {
    func domainError(in locale: AppLocale) -> DomainError {
        DomainError(kind: "network", message: "the channel closed", detail: "push channel closed")
    }
}

/// A thread: messages pushed by the server, and an unread count polled on the host's clock.
@HostActor
final class ThreadScreen: ViewModel {
    static let kind = "ThreadScreen"
    @Output var messages: [String] = []
    @Output var polls = 0
    var channel: PushChannel
    let incoming = Listening { vm in
        for try await message in vm.channel.stream { vm.messages.append(message) }
    }
    let poll = Listening { vm in
        while true {
            try await vm.context.clock.sleep(for: .seconds(30))
            vm.polls += 1
        }
    }

    init(channel: PushChannel) { self.channel = channel }
}

@Suite("Authoring: streams bound to a view-model")
@HostActor
struct ListeningKindTests {
    @Test func valuesAreAppliedInTheHostsTurnsAndAPollRunsOnTheClock() async {
        let channel = PushChannel()
        let test = ViewModelTest { ThreadScreen(channel: channel) }
        #expect(test.viewModel.incoming.isListening)
        // A value pushed from outside the host reaches the view-model in one of the host's next
        // turns: the test waits for it (with a deadline), as it would for a server's push.
        channel.continuation.yield("hello")
        _ = await test.until("the first message") { test.viewModel.messages.count == 1 }
        test.expect([.changed(\.$messages, ["hello"])])
        channel.continuation.yield("again")
        _ = await test.until("the second message") { test.viewModel.messages.count == 2 }
        await test.advance(by: .seconds(30))
        test.expect([.changed(\.$messages, ["hello", "again"]), .changed(\.$polls, 1)])
        await test.advance(by: .seconds(60))
        test.expect([.changed(\.$polls, 2), .changed(\.$polls, 3)])
        // Listeners are not activity: nothing is reported running, and dispose ends them.
        let poll = test.viewModel.poll
        #expect(test.context.running.isEmpty)
        // A poll's sleep is a timer on the clock: stopping it leaves none armed for `finish`.
        poll.cancel()
        await test.settle()
        await test.finish()
        #expect(channel.isTerminated)
        #expect(!poll.isListening)
    }

    @Test func disposeCancelsTheConsumingTaskAndTheIterator() async {
        let channel = PushChannel()
        let test = ViewModelTest { ThreadScreen(channel: channel) }
        let incoming = test.viewModel.incoming
        await test.settle()
        #expect(!channel.isTerminated)
        test.context.dispose()
        _ = await test.until("the stream's iterator to be cancelled") { channel.isTerminated }
        #expect(!incoming.isListening)
        #expect(test.clock.pendingCount == 0)
        // A value pushed after dispose changes nothing.
        channel.continuation.yield("late")
        await test.settle()
        #expect(test.take().isEmpty)
    }

    @Test func aFailureIsReportedOnceAndEndsTheListener() async {
        let channel = PushChannel()
        let test = ViewModelTest { ThreadScreen(channel: channel) }
        let incoming = test.viewModel.incoming
        channel.continuation.finish(throwing: ChannelClosed())
        _ = await test.until("the listener to end") { !incoming.isListening }
        test.expect([.failed(DomainError(kind: "network", message: "the channel closed", detail: "push channel closed"))])
        #expect(!incoming.isListening)
        await test.advance(by: .seconds(30))
        test.expect([.changed(\.$polls, 1)])
        test.viewModel.poll.cancel()
        await test.settle()
        await test.finish()
    }

    @Test func restartListensAgainAfterAFailure() async {
        let first = PushChannel()
        let test = ViewModelTest { ThreadScreen(channel: first) }
        let incoming = test.viewModel.incoming
        first.continuation.finish(throwing: ChannelClosed())
        _ = await test.until("the listener to end") { !incoming.isListening }
        _ = test.take()
        // A reconnect: the body runs again and subscribes to what is there now.
        let second = PushChannel()
        test.viewModel.channel = second
        incoming.restart()
        second.continuation.yield("back")
        _ = await test.until("the message of the new subscription") { test.viewModel.messages == ["back"] }
        test.expect([.changed(\.$messages, ["back"])])
        #expect(incoming.isListening)
        test.viewModel.poll.cancel()
        await test.settle()
        await test.finish()
    }
}
