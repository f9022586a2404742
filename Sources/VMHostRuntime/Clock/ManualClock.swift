import VMHostEventLoop

/// A clock that moves only when told to: for tests and for `--clock manual`.
///
/// ``advance(by:)`` fires every timer that falls due, one at a time in deadline order, with ``now``
/// set to that timer's deadline while it runs, and lets the work each timer started run to
/// completion (``EventLoop/drain()``) before the next fires. So when `advance` returns, everything
/// the elapsed time caused (countdown ticks, delayed backend replies, finished commands) has happened.
@HostActor
public final class ManualClock: HostClock {
    private struct Entry {
        var deadline: Duration
        var id: UInt64
        var action: @HostActor () -> Void
    }

    public private(set) var now: Duration = .zero
    private var entries: [Entry] = []
    private var nextID: UInt64 = 0

    public init() {}

    /// Timers scheduled and not yet fired.
    public var pendingCount: Int { entries.count }

    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @HostActor () -> Void) -> ClockTimer {
        nextID += 1
        entries.append(Entry(deadline: now + max(delay, .zero), id: nextID, action: action))
        return ClockTimer(raw: nextID)
    }

    public func cancel(_ timer: ClockTimer) {
        entries.removeAll { $0.id == timer.raw }
    }

    /// Moves time forward by `delta`, firing due timers in order. See the type's discussion.
    public func advance(by delta: Duration) {
        let target = now + max(delta, .zero)
        EventLoop.shared.drainSettled()
        while let index = nextDue(before: target) {
            let entry = entries.remove(at: index)
            now = entry.deadline
            entry.action()
            EventLoop.shared.drainSettled()
        }
        now = target
    }

    /// The same as ``advance(by:)`` for code that runs inside a job (a test, a task): after each timer
    /// it waits until the work that timer started has settled (``EventLoop/settle()``).
    public func advance(by delta: Duration) async {
        let target = now + max(delta, .zero)
        await EventLoop.shared.settle()
        while let index = nextDue(before: target) {
            let entry = entries.remove(at: index)
            now = entry.deadline
            entry.action()
            await EventLoop.shared.settle()
        }
        now = target
    }

    private func nextDue(before target: Duration) -> Int? {
        var best: Int?
        for (index, entry) in entries.enumerated() where entry.deadline <= target {
            if let b = best, (entries[b].deadline, entries[b].id) <= (entry.deadline, entry.id) { continue }
            best = index
        }
        return best
    }
}
