/// Identifies a scheduled timer so it can be cancelled.
@_spi(Transport)
public struct TimerID: Hashable, Sendable {
    package let raw: UInt64
    package init(raw: UInt64) { self.raw = raw }
}

/// Timers ordered by deadline, then by the order they were scheduled (equal deadlines fire FIFO):
/// a binary min-heap, so that firing `k` due timers out of `n` costs O(k log n).
///
/// Cancelling is O(1) amortised: a cancelled timer is only marked, dropped when it reaches the top,
/// and the heap is rebuilt without the marked ones once they are more than half of it (so they
/// never cost more than the live ones). The top of the heap is always a live timer.
///
/// Deadlines are `UInt64` (nanoseconds of the system's monotonic clock, or of a manual clock).
///
/// - Important: Only touched on the host thread.
package struct TimerHeap {
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
        var action: @HostActor () -> Void
    }

    private var entries: [Entry] = []
    /// The ids of the timers scheduled and neither fired nor cancelled.
    private var live: Set<UInt64> = []
    private var nextID: UInt64 = 0

    package init() {}

    /// Timers scheduled and neither fired nor cancelled.
    package var count: Int { live.count }

    /// The deadline of the next timer to fire.
    package var nextDeadline: UInt64? { entries.first?.deadline }

    package mutating func insert(deadline: UInt64, action: @escaping @HostActor () -> Void) -> TimerID {
        nextID += 1
        live.insert(nextID)
        entries.append(Entry(deadline: deadline, id: nextID, action: action))
        siftUp(entries.count - 1)
        return TimerID(raw: nextID)
    }

    /// Cancels a timer; a no-op if it fired or was cancelled already.
    package mutating func remove(_ timer: TimerID) {
        guard live.remove(timer.raw) != nil else { return }
        if entries.count > 2 * live.count + 16 {
            rebuild()
        } else {
            dropCancelledTop()
        }
    }

    /// Removes and returns the first timer due at `now`, if any.
    package mutating func popDue(now: UInt64) -> (deadline: UInt64, action: @HostActor () -> Void)? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        removeTop()
        live.remove(first.id)
        dropCancelledTop()
        return (first.deadline, first.action)
    }

    // MARK: Heap

    private mutating func dropCancelledTop() {
        while let first = entries.first, !live.contains(first.id) { removeTop() }
    }

    private mutating func rebuild() {
        entries.removeAll { !live.contains($0.id) }
        var index = entries.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    private mutating func removeTop() {
        let last = entries.count - 1
        if last > 0 {
            entries.swapAt(0, last)
            entries.removeLast()
            siftDown(0)
        } else {
            entries.removeLast()
        }
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        (entries[a].deadline, entries[a].id) < (entries[b].deadline, entries[b].id)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < entries.count, less(left, smallest) { smallest = left }
            if right < entries.count, less(right, smallest) { smallest = right }
            if smallest == parent { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
