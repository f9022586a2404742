import VMHostEventLoop
import Synchronization

/// The time source of a host: every timer, countdown, backend latency and timeout goes through it.
///
/// Two implementations: ``SystemClock`` (real time, timers fire from the host thread's `poll`
/// timeout) and ``ManualClock`` (time moves only when ``ManualClock/advance(by:)`` is called, as
/// `control.clock.advance` does on the wire and tests do in Swift).
@HostActor
public protocol HostClock: AnyObject, Sendable {
    /// Time elapsed since the clock was made.
    var now: Duration { get }
    /// Wall-clock time since the Unix epoch (1970-01-01T00:00:00Z): the only time two processes
    /// share, for a deadline kept across a restart. Timers never run on it (it may jump).
    var wallTime: Duration { get }
    /// Runs `action` on the host thread once `delay` has elapsed. Equal deadlines fire in the order scheduled.
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping @HostActor () -> Void) -> ClockTimer
    /// Cancels a scheduled action; a no-op if it already ran.
    func cancel(_ timer: ClockTimer)
}

/// A scheduled action of a ``HostClock``.
public struct ClockTimer: Hashable, Sendable {
    let raw: UInt64
    public init(raw: UInt64) { self.raw = raw }
}

@HostActor
extension HostClock {
    /// Suspends the calling task for `delay` on this clock.
    ///
    /// Throws `CancellationError` as soon as the task is cancelled (the timer is then removed).
    ///
    /// - Important: Isolated to ``HostActor`` so that the woken task is enqueued straight onto the
    ///   host thread when its timer fires: ``ManualClock/advance(by:)`` and ``EventLoop/settle()``
    ///   then see it as pending work, which is what makes a manual clock deterministic.
    public func sleep(for delay: Duration) async throws {
        try Task.checkCancellation()
        let waiter = SleepWaiter()
        // A woken sleeper is "in transit" until it runs here again (see EventLoop.beginTransit).
        defer { if waiter.wasReleased { EventLoop.shared.endTransit() } }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let timer = schedule(after: delay) { waiter.resume(with: .success(())) }
                waiter.arm(continuation, cancel: { [weak self] in self?.cancel(timer) })
            }
        } onCancel: {
            waiter.resume(with: .failure(CancellationError()))
        }
    }
}

/// One sleeping task: resumed exactly once, by its timer or by cancellation, whichever comes first.
private final class SleepWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var cancelTimer: (@HostActor () -> Void)?
        var pending: Result<Void, any Error>?
    }

    private let state = Mutex(State())

    func arm(_ continuation: CheckedContinuation<Void, any Error>, cancel: @escaping @HostActor () -> Void) {
        let early = state.withLock { state -> Result<Void, any Error>? in
            if let pending = state.pending { return pending }
            state.continuation = continuation
            state.cancelTimer = cancel
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// True once the sleeper was woken (by its timer or by cancellation).
    var wasReleased: Bool { state.withLock { $0.pending != nil } }

    func resume(with result: Result<Void, any Error>) {
        let (continuation, cancelTimer, first) = state.withLock { state in
            guard state.pending == nil else {
                return (CheckedContinuation<Void, any Error>?.none, (@HostActor () -> Void)?.none, false)
            }
            state.pending = result
            defer { state.continuation = nil; state.cancelTimer = nil }
            return (state.continuation, state.cancelTimer, true)
        }
        if first { EventLoop.shared.beginTransit() }
        continuation?.resume(with: result)
        if case .failure = result, let cancelTimer {
            if EventLoop.shared.inLoop {
                HostActor.assumeIsolated { cancelTimer() }
            } else {
                Task { @HostActor in cancelTimer() }
            }
        }
    }
}
