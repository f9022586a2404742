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
/// bound. A message waits parsed (the session's reader parses it, so that the host thread only
/// dispatches it), and counts for the memory it holds so (``InboxMessage/inboxBytes``, at least its
/// text's size). What waits, besides the last message each session read: less than
/// ``Limits/sessionBytes`` per session, and less than ``Limits/workerBytes`` for every session of
/// the worker together (each was counted when its session's reader last looked for room). A
/// session with nothing waiting is never held back by the others: its message is read, and served
/// in turn.
///
/// **Parsing.** A message of more than ``Limits/parsedAloneBytes`` of text is parsed only while
/// the worker has room (``reserveToParse(_:_:textBytes:)``), with the bytes its parse may make
/// reserved until it is queued: the readers of many sessions do not build large messages all at
/// once beyond the worker's bound. A smaller message is parsed at once.
final class Inbox<Receiver: AnyObject & Sendable, Message: InboxMessage>: Sendable {
    struct Limits: Sendable {
        /// Messages one session may have waiting before its reader waits for room.
        var sessionMessages = 64
        /// Bytes one session may have waiting before its reader waits for room.
        var sessionBytes = 1024 * 1024
        /// Bytes every session of the worker may have waiting before a reader whose session has a
        /// message waiting waits for room.
        var workerBytes = 64 * 1024 * 1024
        /// Text up to this size is parsed without waiting for the worker's room.
        var parsedAloneBytes = 64 * 1024
    }

    /// Bytes reserved for parsing a message of `textBytes` bytes of text: about its tree when it
    /// is an array of one-digit numbers (two bytes of text each, ``JSON``'s slot each).
    static func parseReservation(textBytes: Int) -> Int {
        textBytes.multipliedReportingOverflow(by: 12).overflow ? Int.max / 2 : textBytes * 12
    }

    private struct Input {
        let receiver: Receiver
        /// Received, not yet taken by the pump, in order: at most ``Limits/sessionMessages`` and the
        /// message read past them. Emptied without keeping its storage, so that a session with
        /// nothing waiting holds none.
        var queued: [Message] = []
        /// Received, not yet handled: queued, taken, or waiting behind an unfinished batch.
        var count = 0
        var bytes = 0
        /// Reserved by its reader for the message it parses (``reserveToParse(_:_:textBytes:)``).
        var reserved = 0
        /// Listed for a turn (or taking it).
        var listed = false
        /// The reader, waiting for room: what lets it go on.
        var reader: (@Sendable () -> Void)?

        /// Queues `message`: what its reader had reserved to parse it, and whether the session
        /// was listed for a turn already (it is now).
        mutating func queue(_ message: Message, byteCount: Int) -> (reserved: Int, wasListed: Bool) {
            queued.append(message)
            count += 1
            bytes += byteCount
            defer {
                reserved = 0
                listed = true
            }
            return (reserved, listed)
        }

        /// The first message queued, taken.
        mutating func takeFirst() -> Message? {
            guard !queued.isEmpty else { return nil }
            guard queued.count > 1 else {
                defer { queued = [] }
                return queued[0]
            }
            return queued.removeFirst()
        }
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
        /// Readers waiting for the worker's room to parse a large message, in order: the session
        /// and the bytes to reserve.
        var parsers: [(id: Int, receiver: Receiver, bytes: Int, reader: CheckedContinuation<Void, Never>)] = []
    }

    let limits: Limits
    private let state = NIOLockedValueBox(State())

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Queues a message of session `id` (what its reader reserved to parse it is given back);
    /// true when the caller must post the pump.
    func append(_ id: Int, _ receiver: Receiver, _ message: Message) -> Bool {
        let byteCount = message.inboxBytes
        let (pump, parsers) = state.withLockedValue { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            // Changed in place: a copy would copy its queue.
            let (reserved, wasListed) = state.inputs[id, default: Input(receiver: receiver)].queue(message, byteCount: byteCount)
            state.bytes += byteCount - reserved
            // A reservation larger than the message parsed: its room comes back.
            let parsers = state.bytes < limits.workerBytes ? takeParsers(&state) : []
            if !wasListed { state.turns.append(id) }
            if state.scheduled { return (false, parsers) }
            state.scheduled = true
            return (true, parsers)
        }
        for parser in parsers { parser.resume() }
        return pump
    }

    /// Session `id`'s reader, before it parses a message of `textBytes` bytes of text: a large one
    /// waits until the worker has room, then reserves the bytes its parse may make, until it is
    /// queued (``append(_:_:_:)``) or its session removed.
    func reserveToParse(_ id: Int, _ receiver: Receiver, textBytes: Int) async {
        guard textBytes > limits.parsedAloneBytes else { return }
        let bytes = Self.parseReservation(textBytes: textBytes)
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLockedValue { state -> Bool in
                if state.parsers.isEmpty, state.bytes < limits.workerBytes {
                    reserve(id, receiver, bytes, &state)
                    return true
                }
                state.parsers.append((id, receiver, bytes, continuation))
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Readers waiting to parse, taken in order while the worker has room, each with its bytes reserved.
    private func takeParsers(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        var readers: [CheckedContinuation<Void, Never>] = []
        while !state.parsers.isEmpty, state.bytes < limits.workerBytes {
            let parser = state.parsers.removeFirst()
            reserve(parser.id, parser.receiver, parser.bytes, &state)
            readers.append(parser.reader)
        }
        return readers
    }

    private func reserve(_ id: Int, _ receiver: Receiver, _ bytes: Int, _ state: inout State) {
        state.inputs[id, default: Input(receiver: receiver)].reserved += bytes
        state.bytes += bytes
    }

    /// The next message in turn and its session, or nil when none is queued (the pump must then
    /// be posted again next time). The session of the message taken before is listed again first,
    /// at the back, if it has more. `lastListed`: no other session was listed (a turn of every
    /// session with input ends there).
    func next() -> (receiver: Receiver, message: Message, lastListed: Bool)? {
        state.withLockedValue { state in
            if let last = state.taking {
                state.taking = nil
                if let input = state.inputs[last], input.listed {
                    if input.queued.isEmpty {
                        state.inputs[last]?.listed = false
                    } else {
                        state.turns.append(last)
                    }
                }
            }
            while let id = state.turns.popFirst() {
                // Taken in place: a copy would copy the queue.
                guard let message = state.inputs[id]?.takeFirst(), let receiver = state.inputs[id]?.receiver else { continue }
                state.taking = id
                return (receiver, message, state.turns.isEmpty)
            }
            state.scheduled = false
            return nil
        }
    }

    /// Counts a message of session `id` of `byteCount` bytes handled (or dropped); lets its reader,
    /// or the readers that waited for the worker's room, go on when there is room.
    func handled(_ id: Int, byteCount: Int) {
        let (readers, parsers) = state.withLockedValue { state -> ([@Sendable () -> Void], [CheckedContinuation<Void, Never>]) in
            guard let count = state.inputs[id]?.count, count > 0 else { return ([], []) }
            let wasFull = state.bytes >= limits.workerBytes
            state.inputs[id]?.count -= 1
            state.inputs[id]?.bytes -= byteCount
            state.bytes -= byteCount
            var readers: [@Sendable () -> Void] = []
            if let reader = take(id, &state) { readers.append(reader) }
            // The worker's room came back: every reader waiting that now has room goes on.
            if wasFull, state.bytes < limits.workerBytes {
                for other in state.waiting { if let reader = take(other, &state) { readers.append(reader) } }
            }
            return (readers, takeParsers(&state))
        }
        for reader in readers { reader() }
        for parser in parsers { parser.resume() }
    }

    /// Session `id`'s reader, once its message was appended: returns when it may read the next.
    func waitForRoom(_ id: Int) async {
        if state.withLockedValue({ state in state.inputs[id].map { hasRoom($0, state) } ?? true }) { return }
        await withCheckedContinuation { continuation in
            if hasRoom(id, orWhenThere: { continuation.resume() }) { continuation.resume() }
        }
    }

    /// Session `id`'s reader, once its message was appended: true when it may read the next now;
    /// else false, and `goOn` runs (on the thread that made the room) once it may.
    func hasRoom(_ id: Int, orWhenThere goOn: @escaping @Sendable () -> Void) -> Bool {
        state.withLockedValue { state -> Bool in
            guard var input = state.inputs[id], !hasRoom(input, state) else { return true }
            input.reader = goOn
            state.inputs[id] = input
            state.waiting.append(id)
            return false
        }
    }

    /// Forgets session `id` (closed): its queued messages are dropped (returned, for the caller
    /// to free where it wants), what its reader reserved is given back, and its reader, if it
    /// waits, goes on.
    @discardableResult
    func remove(_ id: Int) -> [Message] {
        let (reader, parsers, dropped) = state.withLockedValue {
            state -> ((@Sendable () -> Void)?, [CheckedContinuation<Void, Never>], [Message]) in
            let parsers = state.parsers.filter { $0.id == id }.map(\.reader)
            state.parsers.removeAll { $0.id == id }
            guard let input = state.inputs.removeValue(forKey: id) else { return (nil, parsers, []) }
            state.bytes -= input.bytes + input.reserved
            state.waiting.removeAll { $0 == id }
            if state.taking == id { state.taking = nil }
            return (input.reader, parsers + takeParsers(&state), Array(input.queued))
        }
        reader?()
        for parser in parsers { parser.resume() }
        return dropped
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

    /// Readers waiting for the worker's room to parse a large message.
    var waitingParsers: Int { state.withLockedValue { $0.parsers.count } }

    private func hasRoom(_ input: Input, _ state: State) -> Bool {
        input.count == 0
            || (input.count < limits.sessionMessages && input.bytes < limits.sessionBytes && state.bytes < limits.workerBytes)
    }

    /// Session `id`'s waiting reader, taken, when it has room.
    private func take(_ id: Int, _ state: inout State) -> (@Sendable () -> Void)? {
        guard var input = state.inputs[id], let reader = input.reader, hasRoom(input, state) else { return nil }
        input.reader = nil
        state.inputs[id] = input
        state.waiting.removeAll { $0 == id }
        return reader
    }
}

/// What an ``Inbox`` queues: a message and the bytes it counts for while it waits.
protocol InboxMessage: Sendable {
    /// The bytes the message counts for against the inbox's bounds.
    var inboxBytes: Int { get }
}

/// A message's text (the inbox's own tests).
extension [UInt8]: InboxMessage {
    var inboxBytes: Int { count }
}
#endif
