#if WebSocket
import NIOCore
import NIOWebSocket
import Logging
import Synchronization
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire
import VMHostRuntime
import WSCore

/// One WebSocket connection: its own ``Host`` (view-models, handles, subscriptions, locale) on the
/// host thread, fed one message per text frame, its output written to the connection's NIO event
/// loop.
///
/// Output goes host thread → NIO: the host queues replies, events and changes in its
/// ``OutputQueue`` as on stdio; a push lists the session as having output (once per turn); at the
/// end of a turn (the transport's idle hook, or a turn of the sessions with input) the host thread
/// takes each listed session's output and hands it to the connection's event loop itself, a text
/// frame per message and one flush (``SessionLink``). While the socket is not writable (a page that
/// stopped reading), a writer task is started instead, which waits for the socket: the queue is
/// marked stalled, so property changes merge and only replies and events accumulate, up to
/// ``WebSocketTransport/Options/maxPendingBytes``, beyond which the session is closed; once it has
/// written everything, the host thread writes again. A slow page holds only its own writer: other
/// sessions and the host thread never wait for it.
///
/// A batch is handled ``WebSocketTransport/batchSlice`` members at a time: between slices the host
/// thread serves other sessions, and this session's later messages wait, in order, until the batch
/// is answered.
///
/// The session's host, connection, trace and recording, and how it ended, are its ``SessionCore``'s;
/// this is the transport that carries its bytes. A session ends by `exit`, the server stopping
/// or a frame refused: what it read before is answered, its work is cancelled, and a writer
/// writes everything and closes the connection with a close code (1000, 1001, or the refusal's).
@HostActor
final class WebSocketSession: SessionTransport, FrameReceiver {
    let id: Int
    /// The worker's sessions, this one among them.
    let table: SessionTable
    let core: SessionCore
    let host: Host
    let connection: Connection
    /// Sees every body written (the trace's and the recording's), on the connection's thread.
    nonisolated let observeOutgoing: (@Sendable ([UInt8]) -> Void)?
    /// Runs once the session's recording is finished.
    private let recordingClosed: (@HostActor @Sendable () -> Void)?
    nonisolated let queue: OutputQueue<ChangedMessage>
    /// The connection written to, nil while the session is suspended (``Resumption``).
    var link: SessionLink?
    var closed = false
    /// Whether the session ended (``end(_:code:)``): it handles no more input.
    var hasEnded = false
    /// The close code a refusal asked for (``end(_:code:)``).
    private var refusalCode: WebSocketErrorCode?
    /// How the writer closes the connection once the session ended.
    var endCode: (code: WebSocketErrorCode, reason: String)?
    /// Listed among the sessions whose output is written at the end of the turn.
    var hasOutputListed = false
    /// Messages received while a batch of this session was still being handled, in order.
    var backlog: [ReceivedMessage] = []
    /// How the session's reader parses a message (``ReceivedMessage``): the engine's, read once
    /// the trace and the recording are attached.
    nonisolated let parsing: ParsedFrame.Parsing
    /// What a resumable session keeps to be resumed (protocol/SPEC.md §12, "Resume"); nil for a
    /// session that ends with its connection.
    nonisolated let resumption: Resumption?
    /// While suspended: the timer that closes the session at the end of its grace period.
    var graceTimer: ClockTimer?
    /// The token that resumes the session now (single use: a resume gives another).
    var resumeToken: String?
    /// The `Origin` of the handshake that opened the session: a resume must come from it.
    let origin: String?
    /// Whether the session, suspended, counts as a connection (``SuspendedSlots``).
    var holdsSlot = false
    /// With `--session-dir`, the file where a resumable session keeps its screens for a restart.
    var kept: KeptScreens?

    init(
        id: Int, table: SessionTable, host: Host, maxMessageBytes: Int, link: SessionLink, recording: SessionRecording? = nil,
        options: WebSocketTransport.Options = WebSocketTransport.Options(), logger: Logger,
        resumption: Resumption? = nil, origin: String? = nil
    ) {
        self.id = id
        self.table = table
        self.origin = origin
        self.host = host
        self.connection = Connection(host: host, framing: .ndjson, maxMessageBytes: maxMessageBytes)
        self.core = SessionCore(
            host: host, connection: connection, secretMembers: recording?.secretMembers ?? [],
            recorder: recording?.recorder, trace: nil, tracer: options.traceIncoming,
            tracerOutgoing: options.traceOutgoing, logger: logger)
        self.observeOutgoing = core.observeOutgoing
        self.recordingClosed = recording?.closed
        self.queue = host.outputQueue
        self.link = link
        self.resumption = resumption
        resumption?.attach(link)
        host.engine.batchSlice = WebSocketTransport.batchSlice
        self.parsing = connection.parsing
        core.transport = self
        // Pushes come from the host thread (the session's host).
        queue.onPush { [weak self] in
            HostActor.assumeIsolated {
                guard let self, !self.hasOutputListed else { return }
                self.hasOutputListed = true
                self.table.withOutput.append(self)
            }
        }
    }

    /// Whether the session is suspended: its connection dropped and a page may resume it.
    var isSuspended: Bool { link == nil && !closed }

    /// Handles one message (parsed by the session's reader), or keeps it for later while a batch
    /// of this session is unfinished.
    func receive(_ message: consuming ReceivedMessage) {
        guard !closed, !hasEnded else {
            table.inbox.handled(id, byteCount: message.inboxBytes)
            ReceivedMessage.release(message)
            return
        }
        if host.engine.hasPendingBatch || !backlog.isEmpty {
            backlog.append(message)
            return
        }
        handle(message)
    }

    private func handle(_ message: consuming ReceivedMessage) {
        connection.receive(parsed: message.frame)
        table.inbox.handled(id, byteCount: message.inboxBytes)
        ReceivedMessage.release(message)
        if host.engine.hasPendingBatch { table.resumeLater(self) }
    }

    /// Drops the messages that waited behind an unfinished batch, freeing the large ones off the
    /// host thread.
    private func releaseBacklog() {
        let dropped = backlog
        backlog = []
        for message in dropped { ReceivedMessage.release(message) }
    }

    /// Handles the next slice of the unfinished batch; once it is done, the messages that waited.
    func resume() {
        guard !closed, !hasEnded else { return }
        host.outputQueue.holdWakeups()
        host.engine.continueBatch()
        host.endTurn()
        host.outputQueue.releaseWakeups()
        if host.engine.hasPendingBatch {
            table.resumeLater(self)
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

    /// Ends the session as `end` (the server stopping, a frame refused): no more input is handled,
    /// its work is cancelled (what is pending answers -32800), and the writer closes the
    /// connection once it has written everything, with `code` if given (a refusal's), else the
    /// code of `end` (``SessionTransport/sessionEnding(_:status:)``).
    func end(_ end: SessionEnd, code: WebSocketErrorCode? = nil) {
        guard !closed, !hasEnded else { return }
        refusalCode = code
        core.end(end, status: 0)
    }

    /// Forgets the session: cancels its commands, disposes its view-models, drops its output.
    /// A session the page closed first ends here (``SessionEnd/peerClosed``).
    func close() {
        guard !closed else { return }
        closed = true
        // Its messages still queued are dropped, and their count with those of the backlog.
        releaseBacklog()
        for message in table.inbox.remove(id) { ReceivedMessage.release(message) }
        let requests = host.engine.pendingCount, viewModels = host.liveViewModelCount
        if core.ending == nil {
            // What was queued and not written (the page never got it) is recorded before the end.
            core.end(.peerClosed, status: 0)
        } else {
            recordUnwritten()
            host.cancelEverything()
        }
        // What cancelling the work queued (replies -32800, flags dropping): never written to a
        // closed connection, recorded all the same.
        recordUnwritten()
        core.finish(traceWait: 0)
        recordingClosed?()
        table.logger.debug(
            "session \(id) closed: \(requests) request(s) cancelled; view-models alive \(viewModels), now \(host.liveViewModelCount)")
        connection.close()
        queue.abandon()
        if let graceTimer { host.configuration.clock.cancel(graceTimer) }
        graceTimer = nil
        releaseSlot()
        resumption?.detach()
        link?.leave()
    }

    /// Records what is queued and will never be written (the connection is closed).
    private func recordUnwritten() {
        guard let recorder = core.recorder else { return }
        for body in queue.takeAll() { recorder.outgoing(body) }
    }

    // MARK: FrameReceiver

    /// Runs the worker's pump here while the host thread idles: the message is answered without
    /// waking it, and its reply handed to the connection's event loop, where this runs, without
    /// waking that either. Else posted to the host thread.
    nonisolated func pumpInbox() -> Bool {
        let table = table
        if EventLoop.shared.runHereIfIdle({ table.pumpBriefly() }) { return true }
        EventLoop.shared.execute { HostActor.assumeIsolated { table.pump() } }
        return false
    }

    /// What was read before is answered; then the connection closes with `code`.
    nonisolated func refuse(_ code: WebSocketErrorCode, _ reason: String) {
        EventLoop.shared.execute {
            HostActor.assumeIsolated {
                self.table.pump()
                self.end(.inputRefused(reason), code: code)
            }
        }
    }

    // MARK: SessionTransport

    func outputResumed() {}

    /// Before the recording's last step: what a closed connection will never write is recorded
    /// (a session that ended itself writes what it owes, and the writer records it as written).
    func writeQueued() {
        if closed { recordUnwritten() }
    }

    func sessionEnding(_ end: SessionEnd, status: Int32) {
        hasEnded = true
        switch end {
        case .exitNotification: endCode = (.normalClosure, "exit")
        case .inputRefused(let reason): endCode = (refusalCode ?? .policyViolation, reason)
        default: endCode = (.goingAway, end.description)
        }
        for message in backlog { table.inbox.handled(id, byteCount: message.inboxBytes) }
        releaseBacklog()
    }

    /// Its writer is started at the next idle turn (``SessionTable/writeListedOutput()``), once the work
    /// the cancelling set off has run and written its output.
    func sessionEnded(_ end: SessionEnd, status: Int32) {
        guard !closed, !hasOutputListed else { return }
        hasOutputListed = true
        table.withOutput.append(self)
    }

    /// What the writer of `link` writes next: what the host queued, numbered in the session's log
    /// when it is resumable (never once `link` was left for another connection); nil: nothing.
    nonisolated private func take(for link: SessionLink) -> [[UInt8]]? {
        guard let resumption else { return queue.takeForProducer() }
        return resumption.take(from: queue, for: link)
    }

    /// On the host thread, at the end of a turn with output for this session: the host thread
    /// writes it to the connection itself when it may (``SessionLink/writeOrWake(direct:take:observe:)``),
    /// else a writer is started, unless one runs.
    func writeOrWake(_ link: SessionLink) {
        guard link.writeOrWake(direct: endCode == nil, take: { take(for: link) }, observe: observeOutgoing) else { return }
        let observe = observeOutgoing
        Task.detached { [self] in await writeOutput(link: link, observe: observe) }
    }

    /// A writer of `link`, started when the host thread may not write (``SessionLink``): writes
    /// the control frames owed, then what the host queued, a text frame per message, through
    /// hummingbird's writer (which waits while the socket cannot take more), round after round
    /// while it is woken again; then gives the writing back to the host thread and ends, or, once
    /// the session ended and everything is written, closes the connection. `observe` sees each
    /// body taken to be written, once (`--trace`, a recording), never a control frame nor a frame
    /// written again to a page that resumed. A write that fails (the connection dropped) ends it.
    nonisolated func writeOutput(link: SessionLink, observe: (@Sendable ([UInt8]) -> Void)?) async {
        do {
            while true {
                let (outbound, first) = link.writerRound()
                guard let outbound else { return }
                func write(_ body: [UInt8]) async throws {
                    let frame = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: body))
                    try await outbound.write(.custom(frame))
                }
                // Read before the queue is emptied: everything queued before the session ended is
                // then taken below.
                let end = link.ending.withLock { $0 }
                for body in first { try await write(body) }
                while let bodies = take(for: link) {
                    // Seen as taken, before any is written: a write that fails (the connection
                    // dropped) leaves the rest for a page that resumes, which is sent them again
                    // unseen, so each is seen once, in order, whatever becomes of the connection.
                    if let observe { for body in bodies { observe(body) } }
                    for body in bodies {
                        if !link.channel.isWritable {
                            queue.setStalled(true)
                            link.stalled.store(true, ordering: .relaxed)
                        }
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
                    link.finish()
                    return
                }
                // Everything taken is handed on: the host thread writes again, unless woken meanwhile.
                if link.writerRoundDone() { return }
            }
        } catch {
            link.finish()
        }
    }
}
#endif
