/// A message whose pending copies can merge while the reader is slow: the latest values win.
public protocol MergeableMessage: Sendable {
    /// Folds a newer message for the same key into this one.
    mutating func merge(_ newer: Self)
    /// The JSON body to write.
    func encode() -> [UInt8]
}

/// The outgoing messages of one connection, in order, with bounded memory for a reader that stops.
///
/// Two kinds of entries:
/// - plain messages (responses, events): kept whole and written in order, never dropped;
/// - mergeable messages (property changes), keyed: while the reader is stalled (the writer found
///   the output full, or a test marked it so), a newer one for a key merges into the one still
///   waiting for that key instead of queueing behind it. A plain message pushed with that key seals the waiting one,
///   so the order of a key's changes and events is kept: changes made after an event are never
///   written before it. While the writer keeps up, nothing merges, so the notifications a client
///   sees do not depend on thread timing.
///
/// Memory therefore grows with the number of events and responses, never with the number of
/// property changes.
///
/// Thread-safe: the host thread pushes, a writer (a thread, or a test) takes.
public final class OutputQueue<Message: MergeableMessage>: @unchecked Sendable {
    enum Entry {
        case plain([UInt8])
        case mergeable(UInt64)
    }

    private struct State {
        var entries: [Entry] = []
        var head = 0
        var mergeables: [UInt64: Message] = [:]
        /// The waiting mergeable entry of each key, if nothing sealed it since.
        var open: [Int: UInt64] = [:]
        var nextID: UInt64 = 0
        var plainBytes = 0
        var closed = false
        var takerBusy = false
        var stalled = false
        var holdingWakeups = false
        var wakeupHeld = false
    }

    private let condition = Condition()
    private var state = State()

    public init() {}

    /// Queues a plain message. `key` (a subscription) seals that key's waiting mergeable message.
    public func push(_ body: [UInt8], key: Int? = nil) {
        condition.withLock {
            guard !state.closed else { return }
            if let key { state.open[key] = nil }
            state.entries.append(.plain(body))
            state.plainBytes += body.count
            wakeTakerLocked()
        }
    }

    /// Queues a mergeable message for `key`, or merges it into the one still waiting for `key`.
    public func push(merging message: Message, key: Int) {
        condition.withLock {
            guard !state.closed else { return }
            if state.stalled, let id = state.open[key], state.mergeables[id] != nil {
                state.mergeables[id]!.merge(message)
                return
            }
            state.nextID += 1
            let id = state.nextID
            state.mergeables[id] = message
            state.open[key] = id
            state.entries.append(.mergeable(id))
            wakeTakerLocked()
        }
    }

    /// Holds the taker's wake-ups until ``releaseWakeups()``: the host calls it around one chunk
    /// of input, so that the replies to a pipelined burst are written together in a few `write(2)`
    /// calls instead of one wake-up and one write each. Nothing is merged or reordered by it.
    public func holdWakeups() {
        condition.withLock { state.holdingWakeups = true }
    }

    /// Ends ``holdWakeups()`` and wakes the taker if anything was queued meanwhile.
    public func releaseWakeups() {
        condition.withLock {
            state.holdingWakeups = false
            if state.wakeupHeld {
                state.wakeupHeld = false
                condition.broadcast()
            }
        }
    }

    private func wakeTakerLocked() {
        if state.holdingWakeups {
            state.wakeupHeld = true
        } else {
            condition.broadcast()
        }
    }

    /// Marks the reader as stalled (or not): the writer does when a write finds the output full and
    /// again when it has drained; tests do to play a client that stopped reading.
    public func setStalled(_ stalled: Bool) {
        condition.withLock { state.stalled = stalled }
    }

    /// Forgets the waiting mergeable message of `key` (its subscription ended).
    public func drop(key: Int) {
        condition.withLock {
            if let id = state.open.removeValue(forKey: key) { state.mergeables[id] = nil }
        }
    }

    /// Entries waiting, and the bytes held by plain ones: for tests and benchmarks of boundedness.
    public var pendingCount: Int { condition.withLock { state.entries.count - state.head } }
    public var pendingPlainBytes: Int { condition.withLock { state.plainBytes } }

    /// Takes every waiting message, encoded, in order; empty if none.
    public func takeAll() -> [[UInt8]] {
        let taken: ([Entry], [UInt64: Message]) = condition.withLock { takeLocked() }
        return Self.encode(taken)
    }

    /// Blocks until a message is waiting or the queue is closed; then takes them all.
    /// Returns nil once closed and empty.
    public func waitAndTakeAll() -> [[UInt8]]? {
        let taken: ([Entry], [UInt64: Message])? = condition.withLock {
            state.takerBusy = false
            condition.broadcast()
            while state.head == state.entries.count {
                if state.closed { return nil }
                condition.wait()
            }
            state.takerBusy = true
            return takeLocked()
        }
        guard let taken else { return nil }
        return Self.encode(taken)
    }

    /// Blocks until everything pushed so far was taken and the taker is waiting again (written),
    /// or `nanoseconds` passed. True when flushed.
    public func waitUntilFlushed(nanoseconds: UInt64) -> Bool {
        condition.withLock {
            while state.head < state.entries.count || state.takerBusy {
                if !condition.wait(nanoseconds: nanoseconds) { return false }
            }
            return true
        }
    }

    /// Refuses further messages and wakes a waiting taker; messages already queued are still taken.
    public func close() {
        condition.withLock {
            state.closed = true
            condition.broadcast()
        }
    }

    /// Discards everything and closes (the reader is gone).
    public func abandon() {
        condition.withLock {
            state.closed = true
            state.entries.removeAll()
            state.head = 0
            state.mergeables.removeAll()
            state.open.removeAll()
            state.plainBytes = 0
            state.takerBusy = false
            condition.broadcast()
        }
    }

    private func takeLocked() -> ([Entry], [UInt64: Message]) {
        let entries = Array(state.entries[state.head...])
        state.entries.removeAll(keepingCapacity: true)
        state.head = 0
        state.plainBytes = 0
        var taken: [UInt64: Message] = [:]
        for case .mergeable(let id) in entries {
            taken[id] = state.mergeables.removeValue(forKey: id)
        }
        state.open.removeAll(keepingCapacity: true)
        return (entries, taken)
    }

    private static func encode(_ taken: ([Entry], [UInt64: Message])) -> [[UInt8]] {
        var out: [[UInt8]] = []
        out.reserveCapacity(taken.0.count)
        for entry in taken.0 {
            switch entry {
            case .plain(let body): out.append(body)
            case .mergeable(let id): if let message = taken.1[id] { out.append(message.encode()) }
            }
        }
        return out
    }
}

/// A message type with no values, for queues that carry only plain messages (logs, traces).
public enum PlainOnly: MergeableMessage {
    public mutating func merge(_ newer: PlainOnly) {}
    public func encode() -> [UInt8] { [] }
}
