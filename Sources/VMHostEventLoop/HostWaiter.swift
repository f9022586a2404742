import Synchronization

/// The work of one view-model under test (its commands' and works' tasks, and what they wait
/// for): what the test kit waits for when it settles, so that one test never waits on another's.
///
/// A task started by ``EventLoop/startTask(group:_:)`` belongs to the group it is given; a
/// ``HostWaiter`` belongs to the group of the task that waits on it. A group is settled when none
/// of its tasks has been released and not run yet.
package final class WorkGroup: Sendable {
    private let released = Atomic<Int>(0)

    package init() {}

    /// The group of the task running now, if any.
    @TaskLocal package static var current: WorkGroup?

    /// True when no task of the group is on its way to the host thread.
    package var isSettled: Bool { released.load(ordering: .acquiring) == 0 }

    func add(_ delta: Int) { released.add(delta, ordering: .releasing) }
}

/// A host-actor task suspended until something outside it answers (a timer, a network transfer, a
/// test's stub): resumed exactly once, by its answer or by cancellation, whichever comes first.
///
/// From its resumption until it runs on the host thread again the task is counted as in transit,
/// so that a test's settling and a manual clock's advance wait for what it does next: this is what
/// keeps tests and `--clock manual` exact. An app's backend that answers calls from its own threads
/// suspends its callers with one:
///
/// ```swift
/// let waiter = HostWaiter<Data>()
/// return try await waiter.wait(start: { transfer.start { result in waiter.resume(with: result) } },
///                              onCancel: { transfer.abort() })
/// ```
///
/// - Important: Thread-safe: ``resume(with:)`` may be called from any thread, once or more (only the
///   first counts).
public final class HostWaiter<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var result: Result<Value, any Error>?
        var group: WorkGroup?
        /// Whether the answer released a suspended task, counted in transit until it runs.
        var released = false
    }

    private let state = Mutex(State())

    /// A waiter not answered yet.
    public init() {}

    /// True once the waiter was answered (or cancelled).
    public var isResumed: Bool { state.withLock { $0.result != nil } }

    /// Suspends the calling task until ``resume(with:)``. `start` runs once the task is ready to be
    /// resumed (it may resume at once); `onCancel` runs, on any thread, when the task is cancelled
    /// before an answer came (the wait then throws `CancellationError`).
    @HostActor
    public func wait(start: @HostActor () -> Void = {}, onCancel: @escaping @Sendable () -> Void = {}) async throws -> Value {
        try await withTaskCancellationHandler {
            try await suspend(start: start)
        } onCancel: {
            if resume(with: .failure(CancellationError())) { onCancel() }
        }
    }

    /// Suspends the calling task until ``resume(with:)``, as ``wait(start:onCancel:)`` does, but
    /// whatever happens to the task meanwhile: a cancellation does not end the wait. For an answer
    /// the caller must hear once it asked (the outcome of a write it submitted).
    @HostActor
    public func waitIgnoringCancellation(start: @HostActor () -> Void = {}) async throws -> Value {
        try await suspend(start: start)
    }

    @HostActor
    private func suspend(start: @HostActor () -> Void) async throws -> Value {
        let group = WorkGroup.current
        state.withLock { $0.group = group }
        defer { if state.withLock({ $0.released }) { EventLoop.shared.endTransit(group: group) } }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let early = state.withLock { state -> Result<Value, any Error>? in
                if let result = state.result { return result }
                state.continuation = continuation
                return nil
            }
            if let early {
                continuation.resume(with: early)
            } else {
                start()
            }
        }
    }

    /// Answers the waiting task with `result`; false (and nothing) when it was answered already.
    @discardableResult
    public func resume(with result: Result<Value, any Error>) -> Bool {
        // A task is counted in transit only when this answer releases it: an answer that comes
        // before the wait (or to a waiter nobody waits on) releases nothing.
        let taken = state.withLock { state -> (first: Bool, continuation: CheckedContinuation<Value, any Error>?, group: WorkGroup?) in
            guard state.result == nil else { return (false, nil, nil) }
            state.result = result
            state.released = state.continuation != nil
            if state.released { EventLoop.shared.beginTransit(group: state.group) }
            defer { state.continuation = nil }
            return (true, state.continuation, state.group)
        }
        guard taken.first else { return false }
        taken.continuation?.resume(with: result)
        return true
    }
}
