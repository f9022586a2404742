/// A message whose pending copies can merge while the reader is slow: the latest values win.
@_spi(Transport)
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
@_spi(Transport)
public final class OutputQueue<Message: MergeableMessage>: @unchecked Sendable {
    /// Not nested in the generic queue, so that its metadata is static: a nested enum's is
    /// looked up in the runtime's cache on every push and take.
    typealias Entry = OutputQueueEntry

    /// The mergeable messages waiting, by id. Each is a `Message`, held as `any MergeableMessage`:
    /// a dictionary of the queue's generic `Message` is not specialised in the modules that use the
    /// queue, and every push and take then looked up the metadata of its types (`Dictionary`,
    /// `Optional`) in the runtime's cache and went through the unspecialised dictionary code.
    typealias Mergeables = [UInt64: any MergeableMessage]

    private struct State {
        var entries: [Entry] = []
        var head = 0
        var mergeables: Mergeables = [:]
        /// The waiting mergeable entry of each key, if nothing sealed it since.
        var open: [Int: UInt64] = [:]
        var nextID: UInt64 = 0
        var plainBytes = 0
        var closed = false
        var takerBusy = false
        var stalled = false
        var holdingWakeups = false
        var wakeupHeld = false
        /// Set by ``writeOnProducerThread()``: the producer writes at its quiet points and the taker
        /// thread only finishes what a full output left over (see ``handOff(_:)``).
        var producerWrites = false
        /// Starts the taker thread, when the producer writes: taken (and cleared) by the first
        /// ``handOff(_:)`` or ``close()``, the first that needs the thread.
        var startTaker: (@Sendable () -> Void)?
        /// The taker thread owns the output: it holds bytes the producer could not write, or is
        /// writing what was queued since. Until it lets go, it takes every new message.
        var takerOwns = false
        var leftover: [UInt8]?
        /// While paused (``pause()``): the index in `entries` where the held messages start; the
        /// ones before it are still written.
        var pauseMark: Int?

        /// The end of what may be taken now: everything, or up to the pause mark.
        var takeLimit: Int { pauseMark.map { min($0, entries.count) } ?? entries.count }
    }

    private let condition = Condition()
    /// Touched under `condition` only, by accesses that call out to nothing while they last (the
    /// push hook runs after the lock is let go): no two can overlap, so the run-time exclusivity
    /// check is left out (docs/Guide.md, "Exclusivity checks").
    @exclusivity(unchecked) private var state = State()
    /// Called after every push that queued or merged a message (``onPush(_:)``).
    @exclusivity(unchecked) private var pushHook: (@Sendable () -> Void)?

    /// An empty queue.
    package init() {}

    /// Calls `hook` on the pushing thread after every message queued or merged: a transport that
    /// serves many queues learns which have output without looking at all of them. Set it before
    /// the first push.
    public func onPush(_ hook: @escaping @Sendable () -> Void) {
        condition.withLock { pushHook = hook }
    }

    /// Queues a plain message. `key` (a subscription) seals that key's waiting mergeable message.
    package func push(_ body: [UInt8], key: Int? = nil) {
        let hook = condition.withLock { () -> (@Sendable () -> Void)? in
            guard !state.closed else { return nil }
            if let key { state.open[key] = nil }
            state.entries.append(.plain(body))
            state.plainBytes += body.count
            wakeTakerLocked()
            return pushHook
        }
        hook?()
    }

    /// Queues a mergeable message for `key`, or merges it into the one still waiting for `key`.
    ///
    /// `completeForMerge` is called, on the caller's thread, only when the message merges: it adds
    /// what a merge needs and a queued message does not (the full value behind a list edit).
    package func push(merging message: Message, key: Int, completeForMerge: (inout Message) -> Void = { _ in }) {
        let hook = condition.withLock { () -> (@Sendable () -> Void)? in
            guard !state.closed else { return nil }
            if state.stalled || state.pauseMark != nil, let id = state.open[key], let waiting = state.mergeables[id] {
                var message = message
                completeForMerge(&message)
                // Only `Message`s are stored.
                var merged = waiting as! Message
                merged.merge(message)
                state.mergeables[id] = merged
                return pushHook
            }
            state.nextID += 1
            let id = state.nextID
            state.mergeables[id] = message
            state.open[key] = id
            state.entries.append(.mergeable(id))
            wakeTakerLocked()
            return pushHook
        }
        hook?()
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
        if state.producerWrites && !state.takerOwns && !state.closed { return }
        if state.holdingWakeups {
            state.wakeupHeld = true
        } else {
            condition.broadcast()
        }
    }

    // MARK: Writing on the producer's thread

    /// Switches the queue to writing on the producer's thread: pushes no longer wake the taker;
    /// the producer calls ``takeForProducer()`` at its quiet points and writes what it gets, without
    /// blocking, handing what the output could not take to the taker with ``handOff(_:)``. The
    /// taker thread (``waitAndTakeAll()``) then only writes while the output is full, and after
    /// ``close()``. A sequential request is so answered without a thread hand-off.
    ///
    /// `startTaker` starts the taker thread: it is called once, by the first ``handOff(_:)`` or
    /// ``close()``, so that a host whose output never fills has no writer thread (one thread less
    /// to start, and its stack, in an idle host).
    package func writeOnProducerThread(startTaker: @escaping @Sendable () -> Void = {}) {
        condition.withLock {
            state.producerWrites = true
            state.startTaker = startTaker
        }
    }

    /// The taker thread's start (``writeOnProducerThread(startTaker:)``), once; nil after.
    private func takeTakerStartLocked() -> (@Sendable () -> Void)? {
        defer { state.startTaker = nil }
        return state.startTaker
    }

    /// For the producer: takes the waiting messages, encoded, in order, a slice of about 256 KiB
    /// at a time, unless the taker owns the output (it is finishing a stalled write and takes them
    /// itself) or the queue is closed. Nil then, and when nothing waits.
    public func takeForProducer() -> [[UInt8]]? {
        let taken: ([Entry], Mergeables)? = condition.withLock {
            guard !state.takerOwns, !state.closed, state.head < state.takeLimit else { return nil }
            return takeLocked(maxBytes: Self.writeSliceBytes)
        }
        guard let taken else { return nil }
        return Self.encode(taken)
    }

    /// For the producer: the output was full; the taker thread writes `bytes` (the framed rest of
    /// what the producer took) and everything queued after them. The queue is stalled meanwhile,
    /// so property changes merge.
    package func handOff(_ bytes: [UInt8]) {
        let start = condition.withLock {
            state.takerOwns = true
            state.leftover = bytes
            state.stalled = true
            condition.broadcast()
            return takeTakerStartLocked()
        }
        start?()
    }

    /// Marks the reader as stalled (or not): the writer does when a write finds the output full and
    /// again when it has drained; tests do to play a client that stopped reading.
    public func setStalled(_ stalled: Bool) {
        condition.withLock { state.stalled = stalled }
    }

    /// Holds every message pushed from now on until ``resume()``, as for a reader that stopped:
    /// property changes merge (latest value wins) into the first one of their key held, events and
    /// responses are kept. What was pushed before is still written, and no later change merges
    /// into it. For the test controls (`control.output.pause`), which make merging deterministic.
    package func pause() {
        condition.withLock {
            guard state.pauseMark == nil, !state.closed else { return }
            state.pauseMark = state.entries.count
            state.open.removeAll()
        }
    }

    /// Ends ``pause()``: the held messages are written, in order.
    package func resume() {
        condition.withLock {
            guard state.pauseMark != nil else { return }
            state.pauseMark = nil
            wakeTakerLocked()
        }
    }

    /// Forgets the waiting mergeable message of `key` (its subscription ended).
    package func drop(key: Int) {
        condition.withLock {
            if let id = state.open.removeValue(forKey: key) { state.mergeables[id] = nil }
        }
    }

    /// Entries waiting, and the bytes held by plain ones: for tests and benchmarks of boundedness.
    public var pendingCount: Int { condition.withLock { state.entries.count - state.head } }
    /// The bytes of the plain messages waiting (responses and events, which never merge).
    public var pendingPlainBytes: Int { condition.withLock { state.plainBytes } }

    /// Takes every waiting message, encoded, in order; empty if none.
    @_spi(Transport) public func takeAll() -> [[UInt8]] {
        let taken: ([Entry], Mergeables) = condition.withLock { takeLocked() }
        return Self.encode(taken)
    }

    /// Takes the first waiting message, encoded, and whether more wait after it; nil when none is
    /// waiting. For a taker that hands messages on one at a time (an embedded host's callback):
    /// nothing is allocated per take but the body of a property change.
    @_spi(Transport) public func takeFirst() -> (body: [UInt8], more: Bool)? {
        while true {
            var body: [UInt8]?
            var change: (any MergeableMessage)?
            var more = false
            let took = condition.withLock { takeFirstLocked(body: &body, change: &change, more: &more) }
            guard took else { return nil }
            if let body { return (body, more) }
            // A change dropped (its view-model disposed) is skipped, as `encode` skips it.
            if let change { return (change.encode(), more) }
            if !more { return nil }
        }
    }

    /// Blocks until a message is waiting or the queue is closed; then takes them all.
    /// Returns nil once closed and empty.
    package func waitAndTakeAll() -> [[UInt8]]? {
        guard let taken = waitAndTake() else { return nil }
        return taken.framed.isEmpty ? taken.bodies : [taken.framed] + taken.bodies
    }

    /// For the taker thread: blocks until there is something for it to write, then takes it:
    /// `framed`, bytes already framed (the rest of a write the producer handed off, else empty),
    /// then `bodies`, the waiting messages, encoded, in order, a slice of about 256 KiB at a time
    /// (a backlog is never copied whole). Nil once closed and empty.
    ///
    /// When the producer writes (``writeOnProducerThread()``), the taker waits for a hand-off or
    /// ``close()``, keeps the output until it finds nothing waiting, then leaves it to the
    /// producer again.
    package func waitAndTake() -> (framed: [UInt8], bodies: [[UInt8]])? {
        let taken: ([UInt8], [Entry], Mergeables)? = condition.withLock {
            state.takerBusy = false
            condition.broadcast()
            while true {
                let waiting = state.head < state.takeLimit || state.leftover != nil
                if !state.producerWrites || state.closed || state.takerOwns {
                    if waiting { break }
                    if state.closed { return nil }
                    if state.takerOwns {
                        // Everything handed off is written: the producer writes again.
                        state.takerOwns = false
                        state.stalled = false
                    }
                }
                condition.wait()
            }
            state.takerBusy = true
            let leftover = state.leftover ?? []
            state.leftover = nil
            let (entries, mergeables) = takeLocked(maxBytes: Self.writeSliceBytes)
            return (leftover, entries, mergeables)
        }
        guard let taken else { return nil }
        return (taken.0, Self.encode((taken.1, taken.2)))
    }

    /// Blocks until everything pushed so far was taken and the taker is waiting again (written),
    /// or `nanoseconds` passed. True when flushed.
    package func waitUntilFlushed(nanoseconds: UInt64) -> Bool {
        condition.withLock {
            while state.head < state.takeLimit || state.takerBusy || state.leftover != nil {
                if !condition.wait(nanoseconds: nanoseconds) { return false }
            }
            return true
        }
    }

    /// Refuses further messages and wakes a waiting taker; messages already queued are still taken,
    /// held ones (``pause()``) too.
    package func close() {
        let start = condition.withLock {
            state.closed = true
            state.pauseMark = nil
            condition.broadcast()
            return takeTakerStartLocked()
        }
        start?()
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
            state.leftover = nil
            state.takerOwns = false
            state.pauseMark = nil
            condition.broadcast()
        }
    }

    /// Takes waiting entries from the front, in order: all of them, or (for the writers) about
    /// `maxBytes` of them, so that a backlog is written in slices instead of being copied whole.
    private func takeLocked(maxBytes: Int = .max) -> ([Entry], Mergeables) {
        var end = state.head
        var bytes = 0
        var plainTaken = 0
        let limit = state.takeLimit
        while end < limit && bytes < maxBytes {
            switch state.entries[end] {
            case .plain(let body):
                bytes += body.count
                plainTaken += body.count
            case .mergeable:
                bytes += Self.mergeableSizeEstimate
            }
            end += 1
        }
        let entries = Array(state.entries[state.head..<end])
        state.plainBytes -= plainTaken
        var taken: Mergeables = [:]
        for case .mergeable(let id) in entries {
            taken[id] = state.mergeables.removeValue(forKey: id)
        }
        // A taken change is no longer waiting: newer changes of its key queue behind it.
        if advanceHeadLocked(to: end), !taken.isEmpty { state.open = state.open.filter { taken[$0.value] == nil } }
        return (entries, taken)
    }

    /// Moves the front of the queue to `end`, the entries before it taken; false when that emptied
    /// the queue (then nothing is waiting for any key).
    @inline(__always)
    private func advanceHeadLocked(to end: Int) -> Bool {
        if end == state.entries.count {
            // A queue that held a large backlog gives its memory back.
            state.entries.removeAll(keepingCapacity: state.entries.capacity <= 4096)
            state.head = 0
            state.open.removeAll(keepingCapacity: state.open.capacity <= 4096)
            if state.pauseMark != nil { state.pauseMark = 0 }
            return false
        }
        state.head = end
        if state.head >= 4096 && state.head * 2 >= state.entries.count {
            state.entries.removeFirst(state.head)
            if let mark = state.pauseMark { state.pauseMark = max(0, mark - state.head) }
            state.head = 0
        }
        return true
    }

    /// ``takeLocked(maxBytes:)`` of one entry, without an array of them: its body or its change,
    /// and whether more entries may be taken after it. False when none may be taken.
    private func takeFirstLocked(body: inout [UInt8]?, change: inout (any MergeableMessage)?, more: inout Bool) -> Bool {
        let start = state.head
        guard start < state.takeLimit else { return false }
        var takenID: UInt64?
        switch state.entries[start] {
        case .plain(let plain):
            state.plainBytes -= plain.count
            body = plain
        case .mergeable(let id):
            change = state.mergeables.removeValue(forKey: id)
            if change != nil { takenID = id }
        }
        // What the entry held is let go now, not when the queue empties.
        state.entries[start] = .mergeable(0)
        // A taken change is no longer waiting: newer changes of its key queue behind it.
        if advanceHeadLocked(to: start + 1), let takenID, let key = state.open.first(where: { $0.value == takenID })?.key {
            state.open[key] = nil
        }
        more = state.head < state.takeLimit
        return true
    }

    /// What a property change is counted as when slicing, before it is encoded.
    private static var mergeableSizeEstimate: Int { 256 }

    /// The size of the slices the writers take.
    static var writeSliceBytes: Int { 256 * 1024 }

    private static func encode(_ taken: ([Entry], Mergeables)) -> [[UInt8]] {
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

/// An entry of an ``OutputQueue``: a plain message's body, or the id of a mergeable message.
enum OutputQueueEntry {
    case plain([UInt8])
    case mergeable(UInt64)
}

/// A message type with no values, for queues that carry only plain messages (logs, traces).
package enum PlainOnly: MergeableMessage {
    package mutating func merge(_ newer: PlainOnly) {}
    package func encode() -> [UInt8] { [] }
}
