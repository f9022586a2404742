#if WebSocket
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import Synchronization
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire
import WSCore

/// How a worker serves its connections: each one a session (a new one, or a suspended one it
/// resumes), its frames read into the worker's inbox and its output written, the sessions
/// themselves in its ``SessionTable``.
final class SessionRegistry: Sendable {
    let options: WebSocketTransport.Options
    let makeConfiguration: @HostActor @Sendable (SessionRecorder?) -> Host.Configuration
    let logger: Logger
    let limiter: ConnectionLimiter
    /// The number of this worker, at the head of the resume tokens it gives.
    let worker: Int

    /// The messages received, on their way to the host thread (one inbox per worker).
    let inbox = Inbox<WebSocketSession, ReceivedMessage>()
    /// The worker's sessions.
    let table: SessionTable

    /// How long a page has to answer the close of its session before the connection is closed.
    static let closeTimeoutMilliseconds: Int64 = 1000

    init(
        options: WebSocketTransport.Options, makeConfiguration: @escaping @HostActor @Sendable (SessionRecorder?) -> Host.Configuration,
        logger: Logger, limiter: ConnectionLimiter, worker: Int, link: WorkerLink? = nil
    ) {
        self.worker = worker
        self.options = options
        self.makeConfiguration = makeConfiguration
        self.logger = logger
        self.limiter = limiter
        var folder: SessionFolder?
        if let directory = options.sessionDirectory, options.resumeGraceMilliseconds > 0 { folder = SessionFolder(path: directory) }
        table = SessionTable(
            inbox: inbox, logger: logger, maxPendingBytes: options.maxPendingBytes, maxSuspended: options.maxSuspendedSessions,
            folder: folder, grace: .milliseconds(options.resumeGraceMilliseconds), resumeBufferBytes: options.resumeBufferBytes,
            slots: SuspendedSlots(limiter: limiter, link: link))
    }

    /// Runs on the host thread.
    static func onHost<T: Sendable>(_ body: @escaping @HostActor @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            EventLoop.shared.execute { continuation.resume(returning: HostActor.assumeIsolated { body() }) }
        }
    }

    /// A handshake about to be answered `101` on `channel`: its session counts as open until it
    /// is (``serve(channel:upgrade:inbound:outbound:maxMessageBytes:)``) or the connection closes.
    func upgradeStarting(on channel: any Channel) async -> PendingUpgrade {
        let upgrade = PendingUpgrade()
        let table = table
        await Self.onHost { table.upgrading += 1 }
        channel.closeFuture.whenComplete { _ in
            guard upgrade.settle() else { return }
            EventLoop.shared.execute {
                HostActor.assumeIsolated {
                    table.upgrading -= 1
                    table.exitIfDone()
                }
            }
        }
        return upgrade
    }


    func serve(
        channel: any Channel, upgrade: PendingUpgrade, reader: FrameReader<WebSocketSession>.Handle, inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter, maxMessageBytes: Int, resume: ResumeRequest = .none, origin: String? = nil
    ) async throws {
        let options = options
        let makeConfiguration = makeConfiguration
        let logger = logger
        let worker = worker
        let table = table
        let inbox = inbox
        let opened = await Self.onHost { () -> (WebSocketSession, SessionLink)? in
            let opened = Self.open(
                channel: channel, upgrade: upgrade, resume: resume, origin: origin, options: options,
                makeConfiguration: makeConfiguration, logger: logger, worker: worker, table: table, maxMessageBytes: maxMessageBytes)
            // Before any output is owed: its writer, when one is needed, writes through it.
            opened?.1.attach(outbound)
            return opened
        }
        guard let (session, link) = opened else {
            reader.discard()
            // Never said which: a token unknown, used, expired, or from another origin.
            try await outbound.close(.unknown(4404), reason: "session not resumable")
            return
        }
        defer {
            EventLoop.shared.execute {
                HostActor.assumeIsolated {
                    guard !session.suspend(link) else { return }
                    // Left for another connection: that one serves the session now.
                    if session.link !== link, session.link != nil { return }
                    table.forget(session)
                }
            }
        }
        // The session's messages are read on the event loop (``FrameReader``); hummingbird's
        // reader answers the page's pings and its close, and ends with the connection's input.
        reader.start(
            FrameReader.Target(
                id: session.id, receiver: session, parsing: session.parsing, inbox: inbox, link: link,
                resumption: session.resumption))
        do {
            for try await _ in inbound {}
        } catch {
            // The connection failed: nothing more is handed to it.
            link.leave()
            throw error
        }
        // Every message the page sent before its close (or before the connection dropped) is queued.
        await reader.drained()
        // The page closed: nothing more is written to it. A session that ended closes the
        // connection itself once its output is written: hummingbird closes it once this returns.
        if await Self.onHost({ !session.hasEnded }) {
            link.leave()
        } else {
            await link.closeWritten()
        }
    }

    /// Opens the session of a handshake on the host thread: a new one, or the one its resume
    /// token names (kept here or, after a restart, in `--session-dir`); nil when there is none to
    /// resume.
    @HostActor
    private static func open(
        channel: any Channel, upgrade: PendingUpgrade, resume: ResumeRequest, origin: String?,
        options: WebSocketTransport.Options, makeConfiguration: @HostActor @Sendable (SessionRecorder?) -> Host.Configuration,
        logger: Logger, worker: Int, table: SessionTable, maxMessageBytes: Int
    ) -> (WebSocketSession, SessionLink)? {
        if upgrade.settle() { table.upgrading -= 1 }
        table.installIdleHook()
        if case .resume(let token, let received) = resume {
            // The token is used up whatever comes of it: a second page presenting it gets nothing.
            guard !table.stopping else { return nil }
            let next = Resumption.makeToken(worker: worker)
            guard let session = table.resumeTokens.removeValue(forKey: token) else {
                // Not a session of this process: one kept in --session-dir before a restart?
                return Self.restore(
                    token: token, received: received, origin: origin, channel: channel, next: next, table: table
                ) { resumption in
                    let session = Self.makeSession(
                        channel: channel, resumption: resumption, origin: origin, options: options,
                        makeConfiguration: makeConfiguration, logger: logger, table: table, maxMessageBytes: maxMessageBytes)
                    session.link = nil
                    session.host.keptSecretMembers = options.secretMembers
                    resumption.detach()
                    return session
                }
            }
            guard !session.closed, !session.hasEnded, session.origin == origin else { return nil }
            session.resumeToken = next
            table.resumeTokens[next] = session
            session.keptTokenChanged(to: next)
            return (session, session.resume(on: channel, received: received, token: next))
        }
        var resumption: Resumption?
        if resume == .new, options.resumeGraceMilliseconds > 0 {
            resumption = Resumption(
                grace: .milliseconds(options.resumeGraceMilliseconds), maxBytes: options.resumeBufferBytes)
        }
        let session = Self.makeSession(
            channel: channel, resumption: resumption, origin: origin, options: options,
            makeConfiguration: makeConfiguration, logger: logger, table: table, maxMessageBytes: maxMessageBytes)
        let link = session.link!
        if let resumption {
            let token = Resumption.makeToken(worker: worker)
            session.resumeToken = token
            table.resumeTokens[token] = session
            if let folder = table.folder {
                session.host.keepsScreens = true
                session.host.keptSecretMembers = options.secretMembers
                session.kept = KeptScreens(folder: folder, token: token)
            }
            link.sendControl(Resumption.sessionFrame(token: token, grace: resumption.grace, resumed: nil))
        }
        logger.debug("session \(session.id) opened\(resumption == nil ? "" : " (resumable)")")
        // A handshake that completed after the signal: closed as the others.
        if table.stopping { session.end(.serverStopping) }
        return (session, link)
    }

    /// A new session on the connection of `channel`, listed in `table`.
    @HostActor
    static func makeSession(
        channel: any Channel, resumption: Resumption?, origin: String?, options: WebSocketTransport.Options,
        makeConfiguration: @HostActor @Sendable (SessionRecorder?) -> Host.Configuration, logger: Logger, table: SessionTable,
        maxMessageBytes: Int
    ) -> WebSocketSession {
        table.nextID += 1
        let recording = options.recordSession?()
        var configuration = makeConfiguration(recording?.recorder)
        configuration.limits = options.sessionLimits
        let session = WebSocketSession(
            id: table.nextID, table: table, host: Host(configuration: configuration), maxMessageBytes: maxMessageBytes,
            link: SessionLink(channel: channel), recording: recording, options: options, logger: logger, resumption: resumption,
            origin: origin)
        table.sessions[session.id] = session
        return session
    }
}

/// The sessions of a worker, on the host thread: the pump that hands them their messages, the
/// slices of their unfinished batches, the idle hook that wakes their writers, the suspended ones,
/// and the end of them all when the server stops. One per ``WebSocketTransport/run``, held by its
/// ``SessionRegistry`` and by each of its sessions.
@HostActor
final class SessionTable {
    nonisolated init(
        inbox: Inbox<WebSocketSession, ReceivedMessage>, logger: Logger, maxPendingBytes: Int, maxSuspended: Int, folder: SessionFolder? = nil,
        grace: Duration = .seconds(30), resumeBufferBytes: Int = 1024 * 1024, slots: SuspendedSlots? = nil
    ) {
        self.slots = slots
        self.folder = folder
        self.restoredGrace = grace
        self.resumeBufferBytes = resumeBufferBytes
        self.inbox = inbox
        self.logger = logger
        self.maxPendingBytes = maxPendingBytes
        self.maxSuspended = maxSuspended
    }

    var sessions: [Int: WebSocketSession] = [:]
    /// The resumable sessions by the token that resumes each now.
    var resumeTokens: [String: WebSocketSession] = [:]
    /// The suspended sessions, oldest first (some may have been resumed or closed since).
    var suspendedOrder: [Int] = []
    let maxSuspended: Int
    /// The connections suspended sessions hold (``SuspendedSlots``).
    let slots: SuspendedSlots?
    /// `--session-dir`, where resumable sessions keep their screens for a restart; nil: none.
    let folder: SessionFolder?
    /// The grace period of a session restored from ``folder``.
    let restoredGrace: Duration
    /// `--resume-buffer-bytes`.
    let resumeBufferBytes: Int
    /// The sessions that queued output since their writers were last woken, each once.
    var withOutput: [WebSocketSession] = []
    /// The sessions with a batch to go on with, and whether a turn to do so is scheduled.
    var resumable: [WebSocketSession] = []
    var resumeScheduled = false
    /// Set at the first signal: every session ends, and the process exits once none is left.
    var stopping = false
    /// Handshakes answered `101` whose sessions are not open yet: the process does not exit
    /// before they are open (and then closed as the others) or their connections closed.
    var upgrading = 0
    /// The messages received, on their way to the host thread (one inbox per process: a worker's).
    let inbox: Inbox<WebSocketSession, ReceivedMessage>

    /// Handles what the sessions received, a message of each session in turn, until the inbox is
    /// empty; writes the output of the sessions after each turn of those with input, so that a steady
    /// stream of input does not hold the output back.
    func pump() {
        _ = pump(atMost: .max)
    }

    /// ``pump()`` for at most `limit` messages; true when it stopped at the limit (messages may
    /// be left).
    private func pump(atMost limit: Int) -> Bool {
        var handled = 0
        while handled < limit, let (session, message, lastListed) = inbox.next() {
            session.receive(consume message)
            handled += 1
            if lastListed { writeListedOutput() }
        }
        writeListedOutput()
        return handled == limit
    }

    /// The pump on a connection's event loop, which borrowed the turn of an idle host thread
    /// (``EventLoop/runHereIfIdle(_:)``): at most ``briefPumpMessages`` messages, in turn as
    /// ``pump()`` takes them; what is left is the host thread's, posted to it. An event loop never
    /// serves the other connections' messages for longer than that while its own wait.
    func pumpBriefly() {
        guard pump(atMost: Self.briefPumpMessages) else { return }
        EventLoop.shared.execute { HostActor.assumeIsolated { self.pump() } }
    }

    /// The most messages a borrowed turn handles (``pumpBriefly()``).
    nonisolated static let briefPumpMessages = 16

    /// Goes on with `session`'s batch in a later turn of the host thread: after the messages and
    /// timers due by then, so that one batch never holds the other sessions.
    func resumeLater(_ session: WebSocketSession) {
        resumable.append(session)
        guard !resumeScheduled else { return }
        resumeScheduled = true
        // A timer due now runs after the work ready now, and lets the loop look for more first.
        _ = EventLoop.shared.schedule(at: EventLoop.monotonicNanoseconds()) { [self] in
            resumeScheduled = false
            let sessions = resumable
            resumable = []
            for session in sessions { session.resume() }
            writeListedOutput()
        }
    }

    var nextID = 0
    var idleHook: Int?

    /// Stops the server (the first SIGTERM or SIGINT): new connections are refused, every session
    /// ends (closing with 1001 once its output is written), and the process exits when the last
    /// is gone (``ServerShutdown`` exits a second after the signal anyway).
    func stop(limiter: ConnectionLimiter) {
        guard !stopping else { return }
        stopping = true
        limiter.stop()
        logger.notice("stopping: \(sessions.count) session(s) to close")
        // What was received before the signal is answered, as at the end of a stdio host's input
        // (SPEC §7): no command starts.
        for session in sessions.values { session.host.isStopping = true }
        pump()
        for session in sessions.values {
            session.finishBatch()
            // With --session-dir, a resumable session's screens stay for the restart.
            session.keepForRestart()
            session.end(.serverStopping)
        }
        exitIfDone()
    }

    /// Once stopping, exits when no session is left, nor one about to open.
    func exitIfDone() {
        if stopping, sessions.isEmpty, upgrading == 0 { ServerShutdown.exitNow() }
    }

    /// Forgets `session`: it closes, and what it had waiting is dropped.
    func forget(_ session: WebSocketSession) {
        session.dropKept()
        session.close()
        // Again: a session closed early (its page stopped reading) may have had messages read after.
        for message in inbox.remove(session.id) { ReceivedMessage.release(message) }
        sessions[session.id] = nil
        if let token = session.resumeToken { resumeTokens[token] = nil }
        session.resumeToken = nil
        exitIfDone()
    }

    /// `session` was suspended: past ``maxSuspended`` suspended sessions, the oldest is closed.
    func suspended(_ session: WebSocketSession) {
        suspendedOrder.removeAll { sessions[$0]?.isSuspended != true }
        suspendedOrder.append(session.id)
        while suspendedOrder.count > maxSuspended {
            let oldest = suspendedOrder.removeFirst()
            if let session = sessions[oldest] {
                logger.debug("session \(oldest): closed, more than \(maxSuspended) sessions suspended")
                forget(session)
            }
        }
    }

    let maxPendingBytes: Int
    let logger: Logger

    /// Writes the sessions' output whenever the host thread runs out of work (installed once, at
    /// the first session).
    func installIdleHook() {
        guard idleHook == nil else { return }
        idleHook = EventLoop.shared.addIdleHook { [weak self] in self?.writeListedOutput() }
    }

    /// Writes the output of every session that queued some since the last call (the host thread
    /// hands it to the connection, or a writer is started, ``SessionLink``): the cost is the
    /// sessions with output, not every session. Closes a session whose page stopped reading (its
    /// writer found the socket full) while more than ``maxPendingBytes`` of replies and events
    /// waited for it; a page that reads is sent every reply, however large.
    func writeListedOutput() {
        guard !withOutput.isEmpty else { return }
        let listed = withOutput
        withOutput.removeAll(keepingCapacity: listed.count <= 1024)
        for session in listed {
            session.hasOutputListed = false
            guard !session.closed else { continue }
            if session.kept != nil, session.endCode == nil { session.saveScreens() }
            guard let link = session.link else {
                // Suspended and ended (the server stopping): nobody to write to.
                if session.endCode != nil {
                    forget(session)
                    continue
                }
                // Suspended: what waits for its page is kept up to the resume bound, then given
                // up for the current state at the resume.
                if let resumption = session.resumption, session.queue.pendingPlainBytes > resumption.maxBytes {
                    _ = session.queue.takeAll()
                    resumption.overflow()
                }
                continue
            }
            if let end = session.endCode {
                // Everything the session owes is queued by now: the writer writes it and closes.
                link.ending.withLock { $0 = end }
                session.writeOrWake(link)
                continue
            }
            guard session.queue.pendingCount > 0 else { continue }
            if session.queue.pendingPlainBytes > maxPendingBytes, link.stalled.load(ordering: .relaxed) {
                logger.warning("session \(session.id): its page stopped reading with more than \(maxPendingBytes) bytes of output waiting; closing it")
                forget(session)
                link.channel.close(promise: nil)
                continue
            }
            session.writeOrWake(link)
        }
    }
}

/// A suspended session counts against `--max-connections` as the connection it had: in its
/// worker's cap (``ConnectionLimiter``) and in the supervisor's (``WorkerLink/sessionSuspended()``),
/// from its suspension until it resumes (its new connection is counted on its own) or ends.
struct SuspendedSlots: Sendable {
    let limiter: ConnectionLimiter
    let link: WorkerLink?

    func hold() {
        limiter.holdSuspended()
        link?.sessionSuspended()
    }

    func release() {
        limiter.closed()
        link?.connectionClosed()
    }
}

/// A handshake answered `101` whose session is not open yet (``SessionTable/upgrading``).
final class PendingUpgrade: Sendable {
    private let settled = Atomic<Bool>(false)

    /// True the first time only: the session opened, or the connection closed first.
    func settle() -> Bool { !settled.exchange(true, ordering: .relaxed) }
}
#endif
