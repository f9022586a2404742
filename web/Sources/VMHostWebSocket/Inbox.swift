import NIOConcurrencyHelpers
@_spi(Transport) import VMHostEventLoop

/// The messages received from every session, on their way to the host thread, in arrival order.
///
/// One closure posted to the host thread handles them (``pump(_:)``); it is posted again only after
/// it found the inbox empty. Handling a message runs the work it started (``EventLoop/drain()``),
/// and a drain runs the closures posted meanwhile: posting one closure per message would nest the
/// handling of every message received meanwhile inside the first one's, as deep as a flood of
/// messages goes. With one pump, the depth is one.
///
/// Each session may have at most ``limit`` messages waiting; its reader then waits for room, so a
/// page that sends faster than the host handles is slowed by TCP, not buffered without bound.
final class Inbox: Sendable {
    static let limit = 64

    private struct State {
        var messages: [(WebSocketSession, [UInt8])] = []
        var scheduled = false
    }
    private let state = NIOLockedValueBox(State())

    /// Queues a message; true when the caller must post the pump.
    func append(_ session: WebSocketSession, _ bytes: [UInt8]) -> Bool {
        state.withLockedValue { state in
            state.messages.append((session, bytes))
            if state.scheduled { return false }
            state.scheduled = true
            return true
        }
    }

    /// Takes every waiting message; when there is none, the pump must be posted again next time.
    func takeAll() -> [(WebSocketSession, [UInt8])] {
        state.withLockedValue { state in
            let messages = state.messages
            state.messages.removeAll(keepingCapacity: messages.count <= 1024)
            if messages.isEmpty { state.scheduled = false }
            return messages
        }
    }
}

/// A session's count of received messages not yet handled, and its reader waiting for room.
final class InboundCredit: Sendable {
    private struct State {
        var waiting = 0
        var reader: CheckedContinuation<Void, Never>?
    }
    private let state = NIOLockedValueBox(State())

    /// Counts a message received; suspends while ``Inbox/limit`` messages of this session wait.
    func received() async {
        let mustWait = state.withLockedValue { state -> Bool in
            state.waiting += 1
            return state.waiting >= Inbox.limit
        }
        guard mustWait else { return }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLockedValue { state -> Bool in
                if state.waiting < Inbox.limit { return true }
                state.reader = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Counts a message handled (or dropped); lets the reader go on once half the room is free.
    func handled() {
        let reader = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            state.waiting -= 1
            guard state.waiting <= Inbox.limit / 2, let reader = state.reader else { return nil }
            state.reader = nil
            return reader
        }
        reader?.resume()
    }
}
