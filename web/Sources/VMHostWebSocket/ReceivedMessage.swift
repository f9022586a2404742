#if WebSocket
import Synchronization
@_spi(Transport) import VMHostJSONRPC

/// A message a session's reader received, parsed where it was read (not on the host thread), on
/// its way to the host thread through the worker's ``Inbox``.
///
/// Every session of a worker shares one host thread: a message of two million numbers parsed
/// there (tens of milliseconds) would hold every other session for as long. Parsed by its
/// session's reader, it costs that session alone; the host thread only dispatches it
/// (``Connection/receive(parsed:)``), and hands a large one back to be freed elsewhere
/// (``release(_:)``). The parse is the engine's (``ParsedFrame``, with the session's
/// ``Connection/parsing``): the replies, parse errors, trace and recording are those of a
/// message parsed on the host thread.
struct ReceivedMessage: InboxMessage {
    let frame: ParsedFrame
    /// The bytes the message counts for while it waits: at least its text's, about its tree's
    /// (``ParsedFrame/estimatedBytes``).
    let inboxBytes: Int

    /// `bytes` parsed as `parsing` says.
    init(_ bytes: [UInt8], parsing: ParsedFrame.Parsing) {
        frame = bytes.withUnsafeBytes { ParsedFrame($0, rules: parsing) }
        inboxBytes = frame.estimatedBytes
    }

    /// Messages counting this many bytes or more are freed off the host thread once handled.
    static let releasedElsewhereBytes = 256 * 1024

    /// Frees `message` on a task of its own, not on the calling thread (the host thread), when it
    /// is large: freeing a tree of millions of values takes milliseconds. The message is moved
    /// into a box the task empties, so the tree is freed there whatever the caller still holds
    /// (nothing but the box).
    static func release(_ message: consuming ReceivedMessage) {
        guard message.inboxBytes >= releasedElsewhereBytes else { return }
        let box = ReleaseBox(consume message)
        Task.detached(priority: .low) { box.empty() }
    }
}

/// Holds a message until a task frees it (``ReceivedMessage/release(_:)``).
private final class ReleaseBox: Sendable {
    private let message: Mutex<ReceivedMessage?>

    init(_ message: consuming ReceivedMessage) {
        self.message = Mutex(consume message)
    }

    /// Frees the message here.
    func empty() {
        let taken = message.withLock { $0.take() }
        _ = consume taken
    }
}
#endif
