#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// The output of an embedded host read as ``EmbeddedHost/messages``: its reader takes the
/// messages from the host's output queue itself. While the reader is not waiting for one and
/// output waits, the queue counts as stalled, so property changes merge (latest value wins), as
/// for a client that reads stdout slowly (protocol/SPEC.md §4): memory stays bounded however far
/// behind the reader is.
final class EmbeddedMessageStream: Sendable {
    private struct State {
        /// Taken from the queue, not returned yet, from `head` on.
        var taken: [[UInt8]] = []
        var head = 0
        var waiter: CheckedContinuation<[UInt8]?, Never>?
        var finished = false
        var observe: (@Sendable ([UInt8]) -> Void)?
    }

    private let queue: OutputQueue<ChangedMessage>
    private let state = Mutex(State())

    init(queue: OutputQueue<ChangedMessage>) {
        self.queue = queue
    }

    /// Sees every message as it is taken (`--trace`).
    var observe: (@Sendable ([UInt8]) -> Void)? {
        get { state.withLock { $0.observe } }
        set { state.withLock { $0.observe = newValue } }
    }

    /// The next message, or nil once the host has ended and everything was read (or the reading
    /// task was cancelled).
    func next() async -> [UInt8]? {
        if let ready = state.withLock({ takeLocked(&$0) }) { return ready }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8]?, Never>) in
                let ready = state.withLock { state -> [UInt8]?? in
                    if let message = takeLocked(&state) { return .some(message) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// A message taken, or nil (with `.some(nil)` meaning the end): what the reader gets without
    /// waiting.
    private func takeLocked(_ state: inout State) -> [UInt8]?? {
        if state.head == state.taken.count {
            state.taken = queue.takeAll()
            state.head = 0
            // The reader keeps up: nothing merges.
            queue.setStalled(false)
        }
        if state.head < state.taken.count {
            let message = state.taken[state.head]
            state.head += 1
            state.observe?(message)
            return .some(message)
        }
        return state.finished ? .some(nil) : nil
    }

    /// The host has output (from the host thread): hands it to a waiting reader, else marks the
    /// queue stalled until the reader comes back.
    func wake() {
        let (waiter, message) = state.withLock { state -> (CheckedContinuation<[UInt8]?, Never>?, [UInt8]??) in
            guard let waiter = state.waiter else {
                if queue.pendingCount > 0 { queue.setStalled(true) }
                return (nil, nil)
            }
            guard let message = takeLocked(&state) else { return (nil, nil) }
            state.waiter = nil
            return (waiter, message)
        }
        if let waiter, let message { waiter.resume(returning: message) }
    }

    /// The host has ended and its queue is closed: the reader gets what is left, then the end.
    func finish() {
        state.withLock { $0.finished = true }
        wake()
    }
}
