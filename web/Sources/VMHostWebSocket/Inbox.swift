#if WebSocket
import NIOConcurrencyHelpers
import NIOCore

/// The messages received from every session of a worker, on their way to its host thread: served
/// in turn, one message of each session with input at a time, so that a page that floods its
/// session delays another session by one of its messages at most (protocol/SPEC.md §12, "Fair
/// turns").
///
/// **Turns.** Each session with messages waiting is listed once, in the order its first message
/// arrived. ``next()`` takes the first message of the session at the front; that session is listed
/// again, at the back, only when the pump asks for the next message, after the one taken was
/// handled: a session whose message arrived meanwhile comes before it.
///
/// **The pump.** One closure posted to the host thread handles them (``SessionRegistry/pump()``);
/// it is posted again only after it found the inbox empty. Handling a message runs the work it
/// started (``EventLoop/drain()``), and a drain runs the closures posted meanwhile: posting one
/// closure per message would nest the handling of every message received meanwhile inside the
/// first one's, as deep as a flood of messages goes. With one pump, the depth is one.
///
/// **Bounds.** A message counts from the moment it is received until it is handled (or dropped),
/// the time it waits behind its session's unfinished batch included. A session's reader reads its
/// next message only while the session has nothing waiting, or while all of these hold: fewer than
/// ``Limits/sessionMessages`` messages and less than ``Limits/sessionBytes`` bytes waiting for the
/// session, and less than ``Limits/workerBytes`` bytes waiting for every session of the worker
/// together. A page that sends faster than the host handles is slowed by TCP, not buffered without
/// bound. What waits, besides the last message each session read (at most the largest message
/// allowed): less than ``Limits/sessionBytes`` per session, and less than ``Limits/workerBytes``
/// for every session of the worker together (each was counted when its session's reader last
/// looked for room). A session with nothing waiting is never held back by the others: its message
/// is read, and served in turn.
final class Inbox<Receiver: AnyObject & Sendable>: Sendable {
    struct Limits: Sendable {
        /// Messages one session may have waiting before its reader waits for room.
        var sessionMessages = 64
        /// Bytes one session may have waiting before its reader waits for room.
        var sessionBytes = 1024 * 1024
        /// Bytes every session of the worker may have waiting before a reader whose session has a
        /// message waiting waits for room.
        var workerBytes = 64 * 1024 * 1024
    }

    private struct Input {
        let receiver: Receiver
        /// Received, not yet taken by the pump, in order.
        var queued = CircularBuffer<[UInt8]>()
        /// Received, not yet handled: queued, taken, or waiting behind an unfinished batch.
        var count = 0
        var bytes = 0
        /// Listed for a turn (or taking it).
        var listed = false
        /// The reader, waiting for room.
        var reader: CheckedContinuation<Void, Never>?
    }

    private struct State {
        var inputs: [Int: Input] = [:]
        /// The sessions with messages queued, each once, in turn.
        var turns = CircularBuffer<Int>()
        /// The session whose message was taken last: listed again at the next take, if it has more.
        var taking: Int?
        /// Bytes received and not handled, every session's.
        var bytes = 0
        var scheduled = false
        /// Sessions whose readers wait for room.
        var waiting: [Int] = []
    }

    let limits: Limits
    private let state = NIOLockedValueBox(State())

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Queues a message of session `id`; true when the caller must post the pump.
    func append(_ id: Int, _ receiver: Receiver, _ bytes: [UInt8]) -> Bool {
        state.withLockedValue { state in
            var input = state.inputs.removeValue(forKey: id) ?? Input(receiver: receiver)
            input.queued.append(bytes)
            input.count += 1
            input.bytes += bytes.count
            state.bytes += bytes.count
            if !input.listed {
                input.listed = true
                state.turns.append(id)
            }
            state.inputs[id] = input
            if state.scheduled { return false }
            state.scheduled = true
            return true
        }
    }

    /// The next message in turn and its session, or nil when none is queued (the pump must then
    /// be posted again next time). The session of the message taken before is listed again first,
    /// at the back, if it has more. `lastListed`: no other session was listed (a turn of every
    /// session with input ends there).
    func next() -> (receiver: Receiver, bytes: [UInt8], lastListed: Bool)? {
        state.withLockedValue { state in
            if let last = state.taking {
                state.taking = nil
                if var input = state.inputs[last], input.listed {
                    if input.queued.isEmpty {
                        input.listed = false
                    } else {
                        state.turns.append(last)
                    }
                    state.inputs[last] = input
                }
            }
            while let id = state.turns.popFirst() {
                guard var input = state.inputs[id], let bytes = input.queued.popFirst() else { continue }
                state.inputs[id] = input
                state.taking = id
                return (input.receiver, bytes, state.turns.isEmpty)
            }
            state.scheduled = false
            return nil
        }
    }

    /// Counts a message of session `id` of `byteCount` bytes handled (or dropped); lets its reader,
    /// or the readers that waited for the worker's room, go on when there is room.
    func handled(_ id: Int, byteCount: Int) {
        let readers = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            guard var input = state.inputs[id], input.count > 0 else { return [] }
            let wasFull = state.bytes >= limits.workerBytes
            input.count -= 1
            input.bytes -= byteCount
            state.bytes -= byteCount
            state.inputs[id] = input
            var readers: [CheckedContinuation<Void, Never>] = []
            if let reader = take(id, &state) { readers.append(reader) }
            // The worker's room came back: every reader waiting that now has room goes on.
            if wasFull, state.bytes < limits.workerBytes {
                for other in state.waiting { if let reader = take(other, &state) { readers.append(reader) } }
            }
            return readers
        }
        for reader in readers { reader.resume() }
    }

    /// Session `id`'s reader, once its message was appended: returns when it may read the next.
    func waitForRoom(_ id: Int) async {
        if state.withLockedValue({ state in state.inputs[id].map { hasRoom($0, state) } ?? true }) { return }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLockedValue { state -> Bool in
                guard var input = state.inputs[id], !hasRoom(input, state) else { return true }
                input.reader = continuation
                state.inputs[id] = input
                state.waiting.append(id)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Forgets session `id` (closed): its queued messages are dropped, and its reader, if it
    /// waits, goes on.
    func remove(_ id: Int) {
        let reader = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard let input = state.inputs.removeValue(forKey: id) else { return nil }
            state.bytes -= input.bytes
            state.waiting.removeAll { $0 == id }
            if state.taking == id { state.taking = nil }
            return input.reader
        }
        reader?.resume()
    }

    /// Whether session `id`'s reader may read its next message now.
    func hasRoom(_ id: Int) -> Bool {
        state.withLockedValue { state in state.inputs[id].map { hasRoom($0, state) } ?? true }
    }

    /// Messages and bytes received and not handled, of session `id` (or of every session).
    func waiting(_ id: Int? = nil) -> (messages: Int, bytes: Int) {
        state.withLockedValue { state in
            guard let id else { return (state.inputs.values.reduce(0) { $0 + $1.count }, state.bytes) }
            return state.inputs[id].map { ($0.count, $0.bytes) } ?? (0, 0)
        }
    }

    /// Readers waiting for room.
    var waitingReaders: Int { state.withLockedValue { $0.waiting.count } }

    private func hasRoom(_ input: Input, _ state: State) -> Bool {
        input.count == 0
            || (input.count < limits.sessionMessages && input.bytes < limits.sessionBytes && state.bytes < limits.workerBytes)
    }

    /// Session `id`'s waiting reader, taken, when it has room.
    private func take(_ id: Int, _ state: inout State) -> CheckedContinuation<Void, Never>? {
        guard var input = state.inputs[id], let reader = input.reader, hasRoom(input, state) else { return nil }
        input.reader = nil
        state.inputs[id] = input
        state.waiting.removeAll { $0 == id }
        return reader
    }
}
#endif
