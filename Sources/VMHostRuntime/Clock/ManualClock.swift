import VMHostEventLoop

/// A clock that moves only when told to: for tests and for `--clock manual`.
///
/// ``advance(by:)`` fires every timer that falls due, one at a time in deadline order, with ``now``
/// set to that timer's deadline while it runs, and lets the work each timer started run to
/// completion (``EventLoop/drain()``) before the next fires. So when `advance` returns, everything
/// the elapsed time caused (countdown ticks, delayed backend replies, finished commands) has happened.
///
/// Time is counted in whole nanoseconds up to ``ceiling`` (2^63−1 ns, 9,223,372,036,854 ms, about
/// 292 years): an advance past it stops there, and a timer due after it never fires. Due timers
/// sit in a heap, so firing `k` of `n` costs O(k log n) and cancelling O(1) amortised.
@HostActor
public final class ManualClock: HostClock {
    /// The latest time a manual clock reaches (SPEC §9, `control.clock.advance`).
    nonisolated public static let ceiling: Duration = .nanoseconds(Int64.max)
    /// ``ceiling`` in whole milliseconds: 9,223,372,036,854.
    nonisolated public static let ceilingMilliseconds: Int64 = Int64.max / 1_000_000

    /// Nanoseconds since the clock was made, at most `Int64.max`.
    private var nanoseconds: UInt64 = 0
    private var timers = TimerHeap()

    /// The wall time of a manual clock at ``now`` zero: 2026-01-01T00:00:00Z, the same at every
    /// start, so a deadline kept across a restart is deterministic.
    nonisolated public static let defaultWallOrigin: Duration = .seconds(1_767_225_600)

    /// ``wallTime`` when ``now`` is zero.
    public let wallOrigin: Duration

    /// A clock at zero, whose wall time starts at `wallOrigin`.
    public init(wallOrigin: Duration = ManualClock.defaultWallOrigin) {
        self.wallOrigin = wallOrigin
    }

    public var now: Duration { .nanoseconds(Int64(nanoseconds)) }

    /// ``wallOrigin`` plus ``now``: it moves only with the clock.
    public var wallTime: Duration { wallOrigin + now }

    /// Timers scheduled and not yet fired.
    public var pendingCount: Int { timers.count }

    /// How far the clock can still move: ``ceiling`` minus ``now``.
    public var remaining: Duration { .nanoseconds(Int64.max - Int64(nanoseconds)) }

    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @HostActor () -> Void) -> ClockTimer {
        // Unclamped: a deadline past the ceiling is one the clock never reaches.
        let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(max(0, delay.nanoseconds)))
        return ClockTimer(raw: timers.insert(deadline: overflow ? .max : sum, action: action).raw)
    }

    public func cancel(_ timer: ClockTimer) {
        timers.remove(TimerID(raw: timer.raw))
    }

    /// Moves time forward by `delta` (at most to ``ceiling``), firing due timers in order. See the
    /// type's discussion.
    public func advance(by delta: Duration) {
        let target = target(after: delta)
        EventLoop.shared.drainSettled()
        while let (deadline, action) = timers.popDue(now: target) {
            nanoseconds = deadline
            action()
            EventLoop.shared.drainSettled()
        }
        nanoseconds = target
    }

    /// The same as ``advance(by:)`` for code that runs inside a job (a test, a task): after each timer
    /// it waits until the work that timer started has settled: the work of `group` (one test's)
    /// when given, else all work of the host thread (``EventLoop/settle()``).
    public func advance(by delta: Duration, settling group: WorkGroup? = nil) async {
        let target = target(after: delta)
        await settle(group)
        while let (deadline, action) = timers.popDue(now: target) {
            nanoseconds = deadline
            action()
            await settle(group)
        }
        nanoseconds = target
    }

    private func settle(_ group: WorkGroup?) async {
        if let group { await EventLoop.shared.settle(group: group) } else { await EventLoop.shared.settle() }
    }

    /// `now + delta` in nanoseconds, a negative delta counting as zero, at most ``ceiling``.
    private func target(after delta: Duration) -> UInt64 {
        // `now` ≤ Int64.max and the delta's nanoseconds ≤ Int64.max: the sum fits in a UInt64.
        min(nanoseconds + UInt64(max(0, delta.nanoseconds)), UInt64(Int64.max))
    }
}
