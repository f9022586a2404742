import Logging
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// An app's view-models served in this process: the protocol `vmhost` speaks on stdio, byte for
/// byte, through function calls, for an app that cannot or would rather not start a process (an
/// iOS or macOS app, a Swift command-line tool).
///
/// ```swift
/// import VMHost
///
/// let host = try EmbeddedHost(TodoServer.server, arguments: ["--latency-ms", "0"])
/// try host.send(message: #"{"jsonrpc":"2.0","id":1,"method":"vm.create","params":{"kind":"TodoList"}}"#)
/// for await message in host.messages {          // one whole JSON text per element
///     print(String(decoding: message, as: UTF8.self))
///     break
/// }
/// let status = await host.close()                // the end of input, as EOF on stdin: 0
/// ```
///
/// **The same host as on stdio.** `arguments` are the server's command line (`--clock manual`,
/// `--test-controls`, the app's own options); the host reads what ``send(_:)`` gives it as it reads
/// stdin (either framing, split anywhere) and answers exactly as it would on stdout, one message at
/// a time. ``close()`` is the end of input (protocol/SPEC.md §7): every message sent is handled,
/// the host waits for its requests and commands, then ends and returns the status the process
/// would exit with. `exit` ends it too (status 0 after `shutdown`, else 1). An embedded host never
/// exits the process, never touches stdin, stdout or signal handlers, and logs only to the
/// `logger` it is given.
///
/// **Threads.** Every host of the process lives on the host thread (``EventLoop/shared``). A call
/// of ``send(_:)`` from another thread, while that thread is idle and nothing is queued for it,
/// runs the host's work on the calling thread itself, so the reply is delivered before `send`
/// returns; otherwise the bytes are queued for the host thread, which serves each host's queue a
/// slice at a time, in turn. A send runs the work of its own bytes only, never another host's; past
/// 8 MiB of queued input it waits for this host alone (protocol/embedding.md, Back-pressure). The callback form calls `onMessage` on whichever thread runs the
/// host's work, one call at a time; ``send(_:)`` from inside it is allowed (the bytes are handled
/// after it returns). A callback that takes long delays every host of the process, and loses
/// nothing.
///
/// **Messages.** The ``messages`` sequence (when opened without a callback) takes the output as it
/// is read: while its reader is behind, property changes merge as they do for a slow reader of
/// stdout (SPEC §4, "Slow clients"), so memory stays bounded.
public final class EmbeddedHost: Sendable {
    /// Why a host could not be opened: what the command line would have refused.
    public struct OpenError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The kind of refusal.
        public enum Kind: Sendable, Equatable {
            /// The arguments are no valid command line (`vmhost` would exit 64).
            case usage
            /// The trace file cannot be opened (`vmhost` would exit 2).
            case trace
        }

        /// The kind of refusal.
        public var kind: Kind
        /// What is wrong, as `vmhost` would write it to stderr.
        public var message: String

        init(_ kind: Kind, _ message: String) {
            self.kind = kind
            self.message = message
        }

        public var description: String { message }
    }

    /// Input refused: the host's input was closed (``close()``) or the host has ended (`exit`),
    /// or the input it holds is at its bound and the call was made on the host thread, where it
    /// cannot wait (``send(_:)``).
    public struct InputRefused: Error, Sendable, Equatable {
        /// Why the bytes were not taken.
        public enum Reason: Sendable, Equatable {
            /// The input is closed: nothing more is read.
            case closed
            /// The host holds as much queued input as it may (8 MiB), and the caller runs on the
            /// host thread (inside a callback): write again after it returns.
            case full
        }

        /// Why the bytes were not taken.
        public var reason: Reason

        /// A refusal for `reason`.
        public init(reason: Reason) { self.reason = reason }
    }

    /// What became of the bytes of a write.
    package enum WriteOutcome: Sendable, Equatable {
        case accepted, closed, full
    }

    let session: EmbeddedSession
    let end: EmbeddedEnd
    /// The input queued for the host thread and not handled yet, bounded.
    let queued = QueuedInput(limit: StandardSettings.maxQueuedInputBytes)
    /// The output, when the host was opened without a callback.
    let stream: EmbeddedMessageStream?

    /// Opens a host of `server`'s app that calls `onMessage` with every message it writes, one
    /// whole JSON text per call, on the thread that runs the host's work at that moment (see the
    /// type's discussion), and `onEnd` once with the status after the last message. The
    /// buffer is the callee's to keep.
    ///
    /// - Parameters:
    ///   - arguments: the command line, without the program's name (`["--clock", "manual"]`).
    ///   - logger: where the host logs, at `--log-level` and above; nil: nowhere.
    /// - Throws: ``OpenError`` for what `vmhost` would refuse at start-up.
    public convenience init(
        _ server: Server, arguments: [String] = [], logger: Logger? = nil,
        onMessage: @escaping @Sendable (_ message: [UInt8]) -> Void,
        onEnd: (@Sendable (_ status: Int32) -> Void)? = nil
    ) throws(OpenError) {
        try self.init(server: server, arguments: arguments, logger: logger, delivery: .callback(onMessage, onEnd: onEnd))
    }

    /// Opens a host of `server`'s app whose output is read from ``messages``.
    ///
    /// - Parameters:
    ///   - arguments: the command line, without the program's name (`["--clock", "manual"]`).
    ///   - logger: where the host logs, at `--log-level` and above; nil: nowhere.
    /// - Throws: ``OpenError`` for what `vmhost` would refuse at start-up.
    public convenience init(_ server: Server, arguments: [String] = [], logger: Logger? = nil) throws(OpenError) {
        try self.init(server: server, arguments: arguments, logger: logger, delivery: .stream)
    }

    /// Opens a host delivering its output as `delivery` says (the C ABI passes its own callback).
    package init(server: Server, arguments: [String], logger: Logger?, delivery: EmbeddedSession.Delivery) throws(OpenError) {
        let end = EmbeddedEnd()
        let opened = EventLoop.shared.runAndWait { () -> Result<EmbeddedSession, OpenError> in
            do throws(OpenError) {
                return .success(try EmbeddedSession(server: server, arguments: arguments, logger: logger, delivery: delivery, end: end))
            } catch {
                return .failure(error)
            }
        }
        switch opened {
        case .success(let session):
            self.session = session
            self.end = end
            self.stream = session.stream
        case .failure(let error):
            throw error
        }
    }

    deinit {
        // Dropped without a close: the end of its input, as when a client closes stdin.
        requestClose()
    }

    /// The output, one whole JSON text per element, in order; it ends after the host's last
    /// message. For a host opened without a callback (empty otherwise), read by one task.
    public var messages: Messages { Messages(stream: stream) }

    /// Writes `bytes` to the host's input, as a client writes to `vmhost`'s stdin: whole messages
    /// in either framing, or any piece of a stream. Any thread; the bytes are copied when they
    /// cannot be handled before the call returns.
    ///
    /// A thread other than the host thread waits here while the host holds 8 MiB of its input
    /// queued and not handled (protocol/SPEC.md §10): it waits for this host alone, never for
    /// another.
    ///
    /// - Throws: ``InputRefused`` (`closed`) after ``close()`` or once the host has ended (`exit`);
    ///   (`full`) on the host thread while the queued input is at its bound. The bytes were not read.
    public func send(_ bytes: some Collection<UInt8>) throws(InputRefused) {
        let outcome: WriteOutcome = bytes.withContiguousStorageIfAvailable { buffer in
            write(UnsafeRawBufferPointer(buffer))
        } ?? Array(bytes).withUnsafeBytes { write($0) }
        try Self.check(outcome)
    }

    private static func check(_ outcome: WriteOutcome) throws(InputRefused) {
        switch outcome {
        case .accepted: return
        case .closed: throw InputRefused(reason: .closed)
        case .full: throw InputRefused(reason: .full)
        }
    }

    /// Writes one whole message, framed as the host reads its input: a line for ndjson (raw line
    /// breaks, which JSON text needs only as white space, become spaces), a `Content-Length`
    /// header for lsp.
    ///
    /// - Throws: ``InputRefused`` as ``send(_:)`` does.
    public func send(message: String) throws(InputRefused) {
        let body = Array(message.utf8)
        try Self.check(body.withUnsafeBytes { write($0, asMessage: true) })
    }

    /// Ends the input (as EOF on stdin, SPEC §7) and waits until the host has ended: every
    /// message sent is handled, its requests answered and its commands ended, the output
    /// delivered. Returns the status `vmhost` would exit with: 0, or 1 after `exit` without
    /// `shutdown`. Closing again returns the same status.
    @discardableResult
    public func close() async -> Int32 {
        requestClose()
        return await end.ended()
    }

    /// The status once the host has ended (``close()``, or `exit`), else nil.
    public var status: Int32? { end.status }

    // MARK: For the C ABI

    /// Writes `bytes` (see ``send(_:)``). `asMessage`: the bytes are one whole message, to be
    /// framed (``send(message:)``), else a piece of the stream.
    package func write(_ bytes: UnsafeRawBufferPointer, asMessage: Bool = false) -> WriteOutcome {
        let session = session
        // Handled here and now when the host thread is idle: the reply comes before the return.
        // The caller's bytes are read during this call only, on this thread.
        nonisolated(unsafe) let unsafeBytes = bytes
        var accepted = false
        let ran = EventLoop.shared.runHereIfIdle {
            guard end.isOpen else { return }
            accepted = asMessage ? session.consumeMessage(unsafeBytes) : session.consume(unsafeBytes)
        }
        if ran { return accepted ? .accepted : .closed }
        guard end.isOpen else { return .closed }
        // Else queued, in the order of acceptance (a close requested later is queued after it),
        // within the bound: a thread waits here for this host's queue alone; the host thread
        // cannot wait for itself.
        guard queued.reserve(bytes.count, canWait: !EventLoop.shared.inLoop) else { return .full }
        let item = QueuedInput.Item.bytes(Array(bytes), asMessage: asMessage)
        let posted = end.ifOpen { if queued.append(item) { scheduleServe() } }
        if !posted { queued.release(bytes.count) }
        return posted ? .accepted : .closed
    }

    /// Posts a turn of the host thread that serves this host's queued input (``serveQueued()``).
    private func scheduleServe() {
        let session = session
        let queued = queued
        EventLoop.shared.execute {
            HostActor.assumeIsolated { Self.serveQueued(session: session, queued: queued) }
        }
    }

    /// Handles this host's queued input, at most ``QueuedInput/slice`` bytes of it (at least one
    /// write), then, if more waits, posts itself again behind the work of the other hosts: a host
    /// flooded with input takes the host thread one slice at a time, in turn with the others.
    @HostActor
    private static func serveQueued(session: EmbeddedSession, queued: QueuedInput) {
        let (items, more) = queued.take()
        for item in items {
            switch item {
            case .bytes(let bytes, let asMessage):
                _ = bytes.withUnsafeBytes { asMessage ? session.consumeMessage($0) : session.consume($0) }
                queued.release(bytes.count)
            case .finish:
                session.finishInput()
            }
        }
        guard more else { return }
        EventLoop.shared.execute {
            HostActor.assumeIsolated { serveQueued(session: session, queued: queued) }
        }
    }

    /// Ends the input without waiting (see ``close()``); false if it was ended already.
    @discardableResult
    package func requestClose() -> Bool {
        let requested = end.close {
            // Behind the input queued before it.
            if queued.append(.finish) { scheduleServe() }
        }
        guard requested else { return false }
        // Run at once when the host thread is idle, so that a host with nothing in flight ends
        // before the caller waits.
        _ = EventLoop.shared.runHereIfIdle {}
        return true
    }

    /// Waits, blocking the calling thread, until the host has ended; returns its status. Never
    /// from the host thread (it would wait for itself).
    package func waitForEnd() -> Int32 { end.waitBlocking() }

    /// Whether the host has ended or its input is closed.
    package var isOpen: Bool { end.isOpen }

    /// The output of a host opened without a callback.
    public struct Messages: AsyncSequence, Sendable {
        public typealias Element = [UInt8]
        let stream: EmbeddedMessageStream?

        public func makeAsyncIterator() -> Iterator { Iterator(stream: stream) }

        public struct Iterator: AsyncIteratorProtocol {
            let stream: EmbeddedMessageStream?

            public mutating func next() async -> [UInt8]? {
                await stream?.next()
            }
        }
    }
}
