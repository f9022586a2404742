@_spi(Transport) import VMHostEventLoop

/// A clock that moves only when told to: for tests and for `--clock manual`.
///
/// ``advance(by:)`` fires every timer that falls due, one at a time in deadline order, with ``now``
/// set to that timer's deadline while it runs, and lets the work each timer started run to
/// completion before the next fires. So when `advance` returns, everything the elapsed time caused
/// (countdown ticks, delayed backend replies, finished commands) has happened.
///
/// Time is counted in whole nanoseconds up to ``ceiling`` (2^63−1 ns, 9,223,372,036,854 ms, about
/// 292 years): an advance past it stops there, and a timer due after it never fires. Due timers
/// sit in a heap, so firing `k` of `n` costs O(k log n) and cancelling O(1) amortised.
@HostActor
public final class ManualClock: HostClock {
    /// The latest time a manual clock reaches (SPEC §9, `control.clock.advance`).
    nonisolated package static let ceiling: Duration = .nanoseconds(Int64.max)
    /// ``ceiling`` in whole milliseconds: 9,223,372,036,854.
    nonisolated package static let ceilingMilliseconds: Int64 = Int64.max / 1_000_000

    /// Nanoseconds since the clock was made, at most `Int64.max`.
    private var nanoseconds: UInt64 = 0
    private var timers = TimerHeap()

    /// The wall time of a manual clock at ``now`` zero: 2026-01-01T00:00:00Z, the same at every
    /// start, so a deadline kept across a restart is deterministic.
    nonisolated package static let defaultWallOrigin: Duration = .seconds(1_767_225_600)

    /// ``wallTime`` when ``now`` is zero.
    package let wallOrigin: Duration

    /// A clock at zero, whose wall time starts at 2026-01-01T00:00:00Z.
    public convenience init() {
        self.init(wallOrigin: Self.defaultWallOrigin)
    }

    /// A clock at zero, whose wall time starts at `wallOrigin`.
    package init(wallOrigin: Duration) {
        self.wallOrigin = wallOrigin
    }

    /// Time elapsed since the clock was made: only what ``advance(by:)`` moved it.
    public var now: Duration { .nanoseconds(Int64(nanoseconds)) }

    /// ``wallOrigin`` plus ``now``: it moves only with the clock.
    public var wallTime: Duration { wallOrigin + now }

    /// Timers scheduled and not yet fired.
    package var pendingCount: Int { timers.count }

    /// How far the clock can still move: ``ceiling`` minus ``now``.
    package var remaining: Duration { .nanoseconds(Int64.max - Int64(nanoseconds)) }

    /// Runs `action` once the clock has been advanced by `delay`.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @HostActor () -> Void) -> ClockTimer {
        // Unclamped: a deadline past the ceiling is one the clock never reaches.
        let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(max(0, delay.nanoseconds)))
        return ClockTimer(raw: timers.insert(deadline: overflow ? .max : sum, action: action).raw)
    }

    /// Cancels a scheduled action; a no-op if it already ran.
    public func cancel(_ timer: ClockTimer) {
        timers.remove(TimerID(raw: timer.raw))
    }

    /// Moves time forward by `delta` (at most to ``ceiling``), firing due timers in order. See the
    /// type's discussion. From the host thread outside any job (the host's `control.clock.advance`).
    package func advance(by delta: Duration) {
        let target = target(after: delta)
        EventLoop.shared.drain()
        while let (deadline, action) = timers.popDue(now: target) {
            nanoseconds = deadline
            action()
            EventLoop.shared.drain()
        }
        nanoseconds = target
    }

    /// Moves time forward by `delta` (at most to ``ceiling``), firing due timers in order, from a
    /// test or a task: after each timer it waits until the work that timer started (a woken sleep,
    /// a command's next step) has run as far as it can.
    public func advance(by delta: Duration) async {
        await advance(by: delta, settling: nil)
    }

    /// ``advance(by:)`` for code that runs inside a job: after each timer it waits until the work
    /// that timer started has settled: the work of `group` (one test's) when given, else all work
    /// of the host thread (``EventLoop/settle()``).
    /// `settled` runs each time that work has settled, first for the work pending before the first
    /// timer (the test kit ends its turn there, as a host flushes).
    package func advance(by delta: Duration, settling group: WorkGroup?, settled: @HostActor () -> Void = {}) async {
        let target = target(after: delta)
        await settle(group)
        settled()
        while let (deadline, action) = timers.popDue(now: target) {
            nanoseconds = deadline
            action()
            await settle(group)
            settled()
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
