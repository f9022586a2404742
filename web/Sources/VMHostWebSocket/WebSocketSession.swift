#if WebSocket
import NIOCore
import NIOWebSocket
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire
import VMHostRuntime
import WSCore

/// One WebSocket connection: its own ``Host`` (view-models, handles, subscriptions, locale) on the
/// host thread, fed one message per text frame, and a writer on the connection's NIO event loop.
///
/// Output goes host thread → NIO: the host queues replies, events and changes in its
/// ``OutputQueue`` as on stdio; a push lists the session as having output (once until its writer
/// is woken); the transport's idle hook wakes the writers of the sessions listed, not of every
/// session; the writer takes the output and writes one text frame per message. While the socket is
/// not writable (a page that stopped reading), the queue is marked stalled, so property changes
/// merge and only replies and events accumulate, up to ``WebSocketTransport/Options/maxPendingBytes``,
/// beyond which the session is closed. A slow page holds only its own writer: other sessions and
/// the host thread never wait for it.
///
/// A batch is handled ``WebSocketTransport/batchSlice`` members at a time: between slices the host
/// thread serves other sessions, and this session's later messages wait, in order, until the batch
/// is answered.
///
/// A session ends by `exit` or the server stopping: what it read before is answered, its work is
/// cancelled, and once its writer has written everything, the connection is closed with a close
/// code (1000, 1001).
@HostActor
final class WebSocketSession {
    let id: Int
    let host: Host
    let connection: Connection
    nonisolated let queue: OutputQueue<ChangedMessage>
    /// The connection written to, nil while the session is suspended (``Resumption``).
    var link: SessionLink?
    var closed = false
    /// Whether the session ended (``end(code:reason:)``): it handles no more input.
    var hasEnded = false
    /// How the writer closes the connection once the session ended.
    var endCode: (code: WebSocketErrorCode, reason: String)?
    /// Listed among the sessions whose writers the idle hook wakes.
    var hasOutputListed = false
    /// Messages received while a batch of this session was still being handled, in order.
    var backlog: [[UInt8]] = []
    /// What sees the session's traffic, if anything (``WebSocketTransport/Options/tapSession``).
    nonisolated let tap: SessionTap?
    /// What a resumable session keeps to be resumed (protocol/SPEC.md §12, "Resume"); nil for a
    /// session that ends with its connection.
    nonisolated let resumption: Resumption?
    /// While suspended: the timer that closes the session at the end of its grace period.
    var graceTimer: ClockTimer?
    /// The token that resumes the session now (single use: a resume gives another).
    var resumeToken: String?
    /// The `Origin` of the handshake that opened the session: a resume must come from it.
    let origin: String?

    init(
        id: Int, host: Host, maxMessageBytes: Int, link: SessionLink, tap: SessionTap? = nil,
        resumption: Resumption? = nil, origin: String? = nil
    ) {
        self.id = id
        self.origin = origin
        self.tap = tap
        self.host = host
        self.connection = Connection(host: host, framing: .ndjson, maxMessageBytes: maxMessageBytes)
        self.queue = host.outputQueue
        self.link = link
        self.resumption = resumption
        resumption?.attach(link)
        host.engine.batchSlice = WebSocketTransport.batchSlice
        // Pushes come from the host thread (the session's host).
        queue.onPush { [weak self] in
            HostActor.assumeIsolated {
                guard let self, !self.hasOutputListed else { return }
                self.hasOutputListed = true
                SessionRegistry.withOutput.append(self)
            }
        }
    }

    /// Whether the session is suspended: its connection dropped and a page may resume it.
    var isSuspended: Bool { link == nil && !closed }

    /// Handles one text frame, or keeps it for later while a batch of this session is unfinished.
    func receive(_ bytes: [UInt8]) {
        guard !closed, !hasEnded else {
            SessionRegistry.inbox.handled(id, byteCount: bytes.count)
            return
        }
        if host.engine.hasPendingBatch || !backlog.isEmpty {
            backlog.append(bytes)
            return
        }
        handle(bytes)
    }

    private func handle(_ bytes: [UInt8]) {
        defer { SessionRegistry.inbox.handled(id, byteCount: bytes.count) }
        bytes.withUnsafeBytes { connection.receive(message: $0) }
        if host.engine.hasPendingBatch { SessionRegistry.resumeLater(self) }
    }

    /// Handles the next slice of the unfinished batch; once it is done, the messages that waited.
    func resume() {
        guard !closed, !hasEnded else { return }
        host.outputQueue.holdWakeups()
        host.engine.continueBatch()
        host.endTurn()
        host.outputQueue.releaseWakeups()
        if host.engine.hasPendingBatch {
            SessionRegistry.resumeLater(self)
            return
        }
        while !backlog.isEmpty, !closed, !hasEnded, !host.engine.hasPendingBatch {
            handle(backlog.removeFirst())
        }
    }

    /// Handles what is left of an unfinished batch at once (the server is stopping: what was read
    /// is answered).
    func finishBatch() {
        guard !closed, !hasEnded, host.engine.hasPendingBatch else { return }
        host.engine.batchSlice = nil
        resume()
    }

    /// Ends the session: no more input is handled, its work is cancelled (what is pending answers
    /// -32800), and the writer closes the connection with `code` once it has written everything.
    /// The writer is told at the next idle turn (``SessionRegistry/wakeWriters()``), once the work
    /// this cancelling set off has run and written its output.
    func end(code: WebSocketErrorCode, reason: String) {
        guard !closed, !hasEnded else { return }
        hasEnded = true
        endCode = (code, reason)
        for bytes in backlog { SessionRegistry.inbox.handled(id, byteCount: bytes.count) }
        backlog = []
        tap?.ending(reason)
        host.cancelEverything()
        if link == nil {
            // Suspended: nobody to write to.
            SessionRegistry.forget(self)
            return
        }
        if !hasOutputListed {
            hasOutputListed = true
            SessionRegistry.withOutput.append(self)
        }
    }

    /// Forgets the session: cancels its commands, disposes its view-models, drops its output.
    func close() {
        guard !closed else { return }
        closed = true
        backlog = []
        // Its messages still queued are dropped, and their count with those of the backlog.
        SessionRegistry.inbox.remove(id)
        let requests = host.engine.pendingCount, viewModels = host.liveViewModelCount
        tap?.closing(queue.takeAll())
        host.cancelEverything()
        tap?.closed(queue.takeAll())
        SessionRegistry.logger.debug(
            "session \(id) closed: \(requests) request(s) cancelled; view-models alive \(viewModels), now \(host.liveViewModelCount)")
        connection.close()
        queue.abandon()
        if let graceTimer { host.configuration.clock.cancel(graceTimer) }
        graceTimer = nil
        resumption?.detach()
        link?.wake.finish()
    }

    /// What the writer of `link` writes next: what the host queued, numbered in the session's log
    /// when it is resumable (never once `link` was left for another connection); nil: nothing.
    nonisolated private func take(for link: SessionLink) -> [[UInt8]]? {
        guard let resumption else { return queue.takeForProducer() }
        return resumption.take(from: queue, for: link)
    }

    /// The writer of `link`, on the NIO side: takes what the host queued and writes it, a text
    /// frame per message, until the session closes or moves to another connection, or until it
    /// ended and everything is written (then it closes the connection). `observe` sees each body
    /// written for the first time (`--trace`, a recording), never a control frame nor a frame
    /// written again to a page that resumed.
    nonisolated func writeOutput(
        link: SessionLink, to outbound: WebSocketOutboundWriter, observe: (@Sendable ([UInt8]) -> Void)?
    ) async throws {
        func write(_ body: [UInt8]) async throws {
            let frame = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: body))
            try await outbound.write(.custom(frame))
        }
        for body in link.takeControl() { try await write(body) }
        for body in link.replay { try await write(body) }
        for await _ in link.wakeups {
            // Read before the queue is emptied: everything queued before the session ended is
            // then taken below.
            let end = link.ending.withLock { $0 }
            for body in link.takeControl() { try await write(body) }
            while let bodies = take(for: link) {
                for body in bodies {
                    if !link.channel.isWritable {
                        queue.setStalled(true)
                        link.stalled.store(true, ordering: .relaxed)
                    }
                    observe?(body)
                    try await write(body)
                }
            }
            queue.setStalled(false)
            link.stalled.store(false, ordering: .relaxed)
            if let end {
                try await outbound.close(end.code, reason: end.reason)
                // A page that never answers the close does not keep the connection.
                let channel = link.channel
                channel.eventLoop.scheduleTask(in: .milliseconds(SessionRegistry.closeTimeoutMilliseconds)) {
                    channel.close(promise: nil)
                }
                return
            }
        }
    }
}
#endif
