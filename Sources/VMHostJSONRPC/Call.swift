import VMHostEventLoop
import VMHostWire

/// One incoming request or notification being handled, and its one reply.
///
/// A handler answers with ``respond(_:)`` (at once, or later for work that takes time). The first
/// answer wins: later ones are ignored, so a request that was cancelled (answered -32800) can never
/// get a second reply when its work ends. A notification (no id) is never answered.
@HostActor
package final class Call {
    /// The method called.
    package let method: String
    /// Nil for a notification.
    package let id: RequestID?
    /// The params as sent, if any (read them with ``params(allowing:)``).
    package let params: JSON?

    /// Whether the call is a notification (it has no id, and is never answered).
    package var isNotification: Bool { id == nil }
    // The call's state is `@exclusivity(unchecked)`: each access is a read or a write that calls
    // out to nothing while it lasts (a handler is copied out before it runs), so none can overlap
    // another (docs/Guide.md, "Exclusivity checks").
    /// True once answered (or cancelled).
    @exclusivity(unchecked) package private(set) var isFinished = false

    /// The engine that answers it; once it is gone, an answer goes nowhere.
    private weak var engine: RPCEngine?
    /// Where a member of a batch hands its response; nil for a call on its own, whose response
    /// the engine writes. (Fields, not a closure made per call: a `ping` allocates less.)
    @exclusivity(unchecked) private var deliver: RPCEngine.Delivery?
    @exclusivity(unchecked) private var cancelHandler: (() -> Void)?
    /// The batch this call is a member of, if any.
    @exclusivity(unchecked) var batch: BatchReply?

    init(method: String, id: RequestID?, params: JSON?, engine: RPCEngine, deliver: RPCEngine.Delivery?) {
        self.method = method
        self.id = id
        self.params = params
        self.engine = engine
        self.deliver = deliver
    }

    /// Answers the call; only the first answer counts.
    package func respond(_ result: Result<JSON, RPCError>) {
        guard !isFinished else { return }
        isFinished = true
        cancelHandler = nil
        let deliver = self.deliver
        self.deliver = nil
        engine?.answer(self, result, deliver: deliver)
    }

    /// Answers the call with `value`.
    package func succeed(_ value: JSON) { respond(.success(value)) }

    /// Answers the call with a result written already as JSON text (a reply mostly made of text
    /// written once, as `vm.create`'s description of a kind); only the first answer counts.
    package func succeed(text: [UInt8]) {
        guard !isFinished else { return }
        isFinished = true
        cancelHandler = nil
        let deliver = self.deliver
        self.deliver = nil
        engine?.answer(self, resultText: text, deliver: deliver)
    }
    /// Answers the call with `error`.
    package func fail(_ error: RPCError) { respond(.failure(error)) }

    /// Runs `action` once the reply that carries this call's answer has been handed to the output:
    /// at once for a call that is not in a batch (call it after answering) and for a notification;
    /// for a member of a batch, once the batch's array has been (it waits for every member), or,
    /// for a batch of only notifications, once its last member was handled.
    package func afterReply(_ action: @escaping @HostActor () -> Void) {
        if let batch, !batch.isAnswered { batch.actions.append(action) } else { action() }
    }

    /// Runs `handler` if the client cancels this request (`$/cancelRequest`) or the host cancels
    /// everything (the end of the host, `shutdown`). The handler stops the work; the call is then
    /// answered -32800 unless the handler answered it itself.
    package func onCancel(_ handler: @escaping () -> Void) {
        if isFinished { return }
        cancelHandler = handler
    }

    /// Cancels the call: runs its cancel handler and answers -32800 if nothing answered yet.
    package func cancel() {
        guard !isFinished else { return }
        let handler = cancelHandler
        cancelHandler = nil
        handler?()
        respond(.failure(.requestCancelled))
    }
}

/// The reply of one batch: what runs once its array is written (``Call/afterReply(_:)``).
@HostActor
final class BatchReply {
    var isAnswered = false
    var actions: [@HostActor () -> Void] = []

    /// Marks the batch answered and runs what waited for it.
    func answered() {
        isAnswered = true
        let waiting = actions
        actions = []
        for action in waiting { action() }
    }
}
