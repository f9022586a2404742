@_spi(Transport) import VMHostEventLoop
import VMHostWire

/// A stream a kind consumes for as long as it lives (new messages of a thread pushed by the
/// server, a poll on the host's clock, any `AsyncSequence`): written once, as a stored property
/// (``ViewModel/Listening``), started when the view-model is made and cancelled at `vm.dispose`.
///
/// ```swift
/// final class ThreadViewModel: ViewModel {
///     @Output var messages: [Message] = []
///     let incoming = Listening { vm in
///         for try await message in vm.chat.messages(thread: vm.threadID) { vm.messages.append(message) }
///     }
/// }
/// ```
///
/// The body runs as a task of the host, like a `Work`'s run: every value is applied in one of the
/// host's turns (outputs change and are delivered as for a command), the task prefers the host
/// thread, and a test on a `ManualClock` sees it settle. Disposing the view-model cancels the task,
/// which ends the `for await` and cancels the sequence's iterator (an `AsyncStream`'s
/// `onTermination` runs, a poll's sleep on the clock is removed). A body that throws a domain
/// error emits it once on the view-model's `error` event, with `input: null`, as a failed command
/// does; the stream then ends (``restart()`` starts it again, after a reconnect delay of the app's
/// choosing). A body that returns (the sequence finished) ends it quietly.
///
/// A listener is not activity: it does not hold the view-model's `loading` up, and the test kit's
/// `finish` does not count it as work still running.
@HostActor
public final class ViewModelListening<Owner: AnyObject>: DeclaredMember {
    let runs: Runs<NoValue>
    /// The stored property's name (invisible on the wire: for messages only).
    private(set) var name = ""
    private var body: (@HostActor (Owner) async throws -> Void)?
    private weak var owner: Owner?
    private weak var declaredIn: ViewModelContext?

    /// A listener running `body` for the life of the view-model.
    ///
    /// Nonisolated for the reason ``ViewModelWork``'s initializer is; it runs on the host thread.
    nonisolated public init(_ body: @escaping @HostActor (Owner) async throws -> Void) {
        (runs, declaredIn) = HostActor.assumeIsolated {
            let runs = Runs<NoValue>(policy: .latest)
            runs.restartsInPlace = true
            runs.countsInActivity = false
            return (runs, ViewModelContext.declaring)
        }
        self.body = body
        HostActor.assumeIsolated { declaredIn?.adopt(self) }
    }

    /// True while the body runs (from the view-model's start until it ends, fails or is cancelled).
    public var isListening: Bool { runs.isExecuting.value }

    /// Starts the body again, cancelling the run in progress if any (after a failure: a reconnect).
    public func restart() {
        (runs.context ?? declaredIn)?.afterBinding { [weak self] in self?.startRun() }
    }

    /// Stops listening until ``restart()``.
    public func cancel() { runs.cancelAll() }

    private func startRun() {
        guard let body else { return }
        guard runs.admit(NoValue()).refusal == nil else { return }
        _ = runs.start(key: nil, body: { [weak owner] in
            guard let owner else { throw CancellationError() }
            try await body(owner)
            return nil
        }, completion: { _ in })
    }

    func bind(name: String, owner: AnyObject, context: ViewModelContext) {
        self.name = name
        self.owner = owner as? Owner
        runs.context = context
    }

    func start(context: ViewModelContext) { startRun() }

    func cancelRuns() { runs.cancelAll() }

    func tearDown() {
        body = nil
        runs.tearDown()
    }
}
