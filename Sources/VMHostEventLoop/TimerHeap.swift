/// Identifies a scheduled timer so it can be cancelled.
public struct TimerID: Hashable, Sendable {
    let raw: UInt64
}

/// Timers ordered by deadline, then by the order they were scheduled (equal deadlines fire FIFO).
///
/// - Important: Only touched on the host thread.
struct TimerHeap {
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
        var action: @HostActor () -> Void
    }

    private var entries: [Entry] = []
    private var nextID: UInt64 = 0

    var nextDeadline: UInt64? { entries.first?.deadline }

    mutating func insert(deadline: UInt64, action: @escaping @HostActor () -> Void) -> TimerID {
        nextID += 1
        entries.append(Entry(deadline: deadline, id: nextID, action: action))
        siftUp(entries.count - 1)
        return TimerID(raw: nextID)
    }

    mutating func remove(_ timer: TimerID) {
        guard let index = entries.firstIndex(where: { $0.id == timer.raw }) else { return }
        removeAt(index)
    }

    mutating func popDue(now: UInt64) -> (@HostActor () -> Void)? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        removeAt(0)
        return first.action
    }

    private mutating func removeAt(_ index: Int) {
        let last = entries.count - 1
        if index != last {
            entries.swapAt(index, last)
            entries.removeLast()
            siftDown(index)
            siftUp(index)
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
