import Logging
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// The input bytes an embedded host holds queued for the host thread, and the writers waiting for
/// room: at most `limit` bytes (a single write larger than it is taken once nothing is queued).
/// A writer waits for this host's queue alone, so a flood of writes to one host never holds up a
/// write to another.
final class QueuedInput: Sendable {
    /// What waits: a write's bytes, or the end of input.
    enum Item: Sendable {
        case bytes([UInt8], asMessage: Bool)
        case finish
    }

    /// The input one turn of the host thread handles at most (at least one write, whatever its
    /// size): 64 KiB, what a stdio host reads at once.
    static let slice = 64 * 1024

    private struct State {
        var bytes = 0
        var waiters: [Latch] = []
        var items: [Item] = []
        var head = 0
        /// A turn of the host thread is posted to serve the items.
        var scheduled = false
    }

    private let state = Mutex(State())
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// The bytes queued now.
    var bytes: Int { state.withLock { $0.bytes } }

    /// Takes room for `count` bytes, waiting for it when `canWait`; false (nothing taken) when the
    /// room is not there and the caller cannot wait.
    func reserve(_ count: Int, canWait: Bool) -> Bool {
        while true {
            let wait = state.withLock { state -> Latch?? in
                if state.bytes == 0 || count <= limit - state.bytes {
                    state.bytes += count
                    return .some(nil)
                }
                guard canWait else { return .none }
                let latch = Latch()
                state.waiters.append(latch)
                return .some(latch)
            }
            switch wait {
            case .none: return false
            case .some(nil): return true
            case .some(let latch?): latch.wait()
            }
        }
    }

    /// Queues `item` (its room taken by ``reserve(_:canWait:)``); true when the caller must post a
    /// turn to serve the queue (none is posted yet).
    func append(_ item: Item) -> Bool {
        state.withLock { state in
            state.items.append(item)
            defer { state.scheduled = true }
            return !state.scheduled
        }
    }

    /// The items of one turn (at most ``slice`` bytes, at least one item), and whether more wait
    /// (the turn then posts another); with none left, the next ``append(_:)`` posts one.
    func take() -> (items: [Item], more: Bool) {
        state.withLock { state in
            var taken: [Item] = []
            var size = 0
            while state.head < state.items.count {
                let item = state.items[state.head]
                if case .bytes(let bytes, _) = item {
                    if !taken.isEmpty && size + bytes.count > Self.slice { break }
                    size += bytes.count
                }
                taken.append(item)
                state.head += 1
            }
            if state.head == state.items.count {
                state.items.removeAll(keepingCapacity: state.items.count <= 1024)
                state.head = 0
                state.scheduled = false
                return (taken, false)
            }
            if state.head >= 1024 && state.head * 2 >= state.items.count {
                state.items.removeFirst(state.head)
                state.head = 0
            }
            return (taken, true)
        }
    }

    /// Gives back the room of `count` bytes handled; the writers waiting try again.
    func release(_ count: Int) {
        let waiters = state.withLock { state -> [Latch] in
            state.bytes -= count
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.open() }
    }
}
