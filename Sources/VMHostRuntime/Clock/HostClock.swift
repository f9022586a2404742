import VMHostEventLoop

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
    /// The timer numbered `raw` by its clock.
    package init(raw: UInt64) { self.raw = raw }
}

@HostActor
extension HostClock {
    /// Suspends the calling task for `delay` on this clock.
    ///
    /// Throws `CancellationError` as soon as the task is cancelled (the timer is then removed).
    ///
    /// - Important: Isolated to ``HostActor`` so that the woken task is enqueued straight onto the
    ///   host thread when its timer fires, counted in transit until it runs there (``HostWaiter``):
    ///   ``ManualClock/advance(by:)`` and the test kit's settling then wait for it, which is what
    ///   makes a manual clock deterministic.
    public func sleep(for delay: Duration) async throws {
        try Task.checkCancellation()
        let waiter = HostWaiter<Void>()
        let armed = ArmedTimer()
        try await waiter.wait(
            start: { armed.timer = schedule(after: delay) { waiter.resume(with: .success(())) } },
            onCancel: { [weak self] in
                Task { @HostActor in
                    if let timer = armed.timer { self?.cancel(timer) }
                }
            })
    }
}

/// The timer of one sleep, for its cancellation.
@HostActor
private final class ArmedTimer {
    var timer: ClockTimer?
}
