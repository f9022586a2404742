#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// The host-thread side of an ``EmbeddedHost``: its ``Host`` and ``Connection``, the delivery of
/// its output, and its end (protocol/SPEC.md §7), as ``StdioServer`` does it for stdio, without
/// the process: no exit, no stdio, no signals.
@HostActor
package final class EmbeddedSession {
    /// Where the output goes.
    package enum Delivery: Sendable {
        /// Called with each message, then once with the status after the last one.
        case callback(@Sendable ([UInt8]) -> Void, onEnd: (@Sendable (Int32) -> Void)?)
        /// Taken by a reader of ``EmbeddedHost/messages``.
        case stream
    }

    private var host: Host?
    @exclusivity(unchecked) private var connection: Connection?
    private let queue: OutputQueue<ChangedMessage>
    private let end: EmbeddedEnd
    @exclusivity(unchecked) private var onMessage: (@Sendable ([UInt8]) -> Void)?
    private var onEnd: (@Sendable (Int32) -> Void)?
    let stream: EmbeddedMessageStream?
    @exclusivity(unchecked) private var trace: EmbeddedTrace?
    /// `--record FILE`.
    @exclusivity(unchecked) private var recorder: SessionRecorder?
    private let logger: Logger
    private let manualClock: Bool

    /// Calls of ``consume(_:)`` and ``finishInput()`` on the stack (a posted write may run inside
    /// another's frame handling): the host is released only once none is.
    ///
    /// This and the other flags and counters of the session are `@exclusivity(unchecked)`: each
    /// access is a read or a write that calls out to nothing while it lasts, so none can overlap
    /// another (docs/Guide.md, "Exclusivity checks").
    @exclusivity(unchecked) private var depth = 0
    @exclusivity(unchecked) private var delivering = false
    /// Messages pushed to the queue, counted by its hook (on the host thread), and how many of
    /// those pushes were delivered: a delivery with nothing new pushed takes nothing.
    nonisolated let pushes = Atomic<Int>(0)
    @exclusivity(unchecked) private var deliveredPushes = 0
    /// Listed among the hosts whose output the idle hook delivers (``EmbeddedHosts``).
    nonisolated let listed = Atomic<Bool>(false)
    /// Set while input is handled (``depth`` above 0): what it pushes is delivered when the input
    /// call ends (``afterInput()``), so the session is not listed for the idle hook.
    nonisolated let handlingInput = Atomic<Bool>(false)
    /// The input ended (``finishInput()``).
    @exclusivity(unchecked) private var inputFinished = false
    /// Every message read before the end of input was handled: the host ends once no work is in
    /// flight.
    private var inputHandled = false
    /// The status the host ends with, once it is ending; set once.
    @exclusivity(unchecked) private var endingStatus: Int32?
    private var released = false

    init(server: Server, arguments: [String], logger: Logger?, delivery: Delivery, end: EmbeddedEnd) throws(EmbeddedHost.OpenError) {
        let configuration = server.configuration
        let parsed: ParsedArguments
        let settings: ServerSettings
        do throws(UsageError) {
            parsed = try ParsedArguments(arguments, options: server.allOptions)
            if parsed.flag("help") { throw UsageError("--help is for the command line; its text:\n" + server.help.text) }
            if parsed.flag("version") { throw UsageError("--version is for the command line: \(configuration.name) \(configuration.version)") }
            settings = try ServerSettings(parsed)
        } catch {
            throw EmbeddedHost.OpenError(.usage, error.message)
        }
        var logger = logger ?? Logger(label: configuration.name) { _ in SwiftLogNoOpLogHandler() }
        logger.logLevel = settings.logLevel
        // `--record FILE`: started before the app's kinds are made, so that the app adds its lines
        // (as on stdio, ServerLifecycle.startRecording).
        var recorder: SessionRecorder?
        if let path = settings.recordPath {
            guard case .callback = delivery else {
                throw EmbeddedHost.OpenError(
                    .usage, "--record needs a host whose messages go to a callback (the sequence is read later than the host writes)")
            }
            do throws(SessionRecorder.RecordingError) {
                let fd = try SessionRecorder.create(path: path)
                let recorded = SessionRecorder.recordedArguments(
                    parsed, options: server.allOptions, leavingOut: ["record", "trace", "framing"])
                recorder = SessionRecorder(
                    fd: fd, arguments: recorded, manualClock: settings.manualClock, maxBytes: settings.maxRecordBytes,
                    budget: settings.recordBudget)
            } catch {
                throw EmbeddedHost.OpenError(.trace, error.description)
            }
        }
        SessionRecorder.current = recorder
        defer { SessionRecorder.current = nil }
        let app: Server.App
        do throws(UsageError) {
            app = try server.makeApp(settings: settings, arguments: parsed, logger: logger)
        } catch {
            recorder?.finish()
            throw EmbeddedHost.OpenError(.usage, error.message)
        }
        var traceFD: Int32?
        if let path = settings.tracePath {
            do throws(TraceRecorder.TraceError) {
                traceFD = try TraceRecorder.open(path: path)
            } catch {
                throw EmbeddedHost.OpenError(.trace, error.description)
            }
        }
        let host = Host(configuration: app.host)
        let connection = Connection(host: host, framing: settings.framing, maxMessageBytes: settings.maxMessageBytes)
        self.host = host
        self.connection = connection
        self.queue = host.outputQueue
        self.end = end
        self.logger = logger
        self.manualClock = host.configuration.clock is ManualClock
        switch delivery {
        case .callback(let onMessage, let onEnd):
            self.onMessage = onMessage
            self.onEnd = onEnd
            self.stream = nil
        case .stream:
            self.stream = EmbeddedMessageStream(queue: host.outputQueue)
        }
        if let traceFD {
            let trace = EmbeddedTrace(
                fd: traceFD, redaction: host.redaction(secretMembers: configuration.secretMembers),
                maxBytes: settings.maxTraceBytes)
            self.trace = trace
            host.engine.tracer = { message in trace.record("in", message) }
            stream?.observe = { body in trace.recordOutgoing(body) }
        }
        if let recorder {
            recorder.attach(to: host, secretMembers: configuration.secretMembers)
            self.recorder = recorder
        }
        host.log = { message in logger.debug("\(message)") }
        host.onExit = { [weak self] code in self?.exitRequested(code) }
        // Held weakly through an immutable capture: a `[weak self]` capture is a mutable box, whose
        // every read (once per frame, once per push) is checked for exclusivity at run time.
        let weakSelf = WeakSession(session: self)
        connection.betweenFrames = { weakSelf.session?.deliver() }
        // Output made by work that completes later (a command, a timer) is delivered when the host
        // thread has run out of work, with the other hosts' (``EmbeddedHosts``).
        host.outputQueue.onPush {
            guard let self = weakSelf.session else { return }
            self.pushes.add(1, ordering: .relaxed)
            // Pushed by the input being handled: delivered when its call ends (``afterInput()``).
            if self.handlingInput.load(ordering: .relaxed) { return }
            if !self.listed.exchange(true, ordering: .relaxed) { EmbeddedHosts.hasOutput(self) }
        }
        EmbeddedHosts.opened(self)
        let summary = app.summary.map { ", \($0)" } ?? ""
        logger.debug(
            "\(configuration.name) \(configuration.version) serving in process (framing \(settings.framing.rawValue)\(summary))")
    }

    // MARK: Input

    /// Reads `bytes` as a piece of the input stream; false when the input is closed.
    func consume(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !inputFinished, endingStatus == nil, let connection else { return false }
        enterInput()
        connection.consume(bytes)
        leaveInput()
        afterInput()
        return true
    }

    /// Reads `body` as one whole message, framed as the connection reads.
    func consumeMessage(_ body: UnsafeRawBufferPointer) -> Bool {
        guard let connection else { return false }
        var framed: [UInt8] = []
        if connection.framing == .lsp {
            framed.reserveCapacity(body.count + 32)
            Framing.lsp.frame(Array(body), into: &framed)
        } else {
            framed.reserveCapacity(body.count + 1)
            for byte in body { framed.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte) }
            framed.append(0x0A)
        }
        return framed.withUnsafeBytes { consume($0) }
    }

    /// The end of input (EOF on stdin): every message read is handled, then the host ends once
    /// its requests are answered and its commands have ended (SPEC §7).
    func finishInput() {
        guard !inputFinished, let connection else { return }
        inputFinished = true
        enterInput()
        connection.finish()
        leaveInput()
        afterInput()
    }

    private func enterInput() {
        if depth == 0 { handlingInput.store(true, ordering: .relaxed) }
        depth += 1
    }

    private func leaveInput() {
        depth -= 1
        if depth == 0 { handlingInput.store(false, ordering: .relaxed) }
    }

    /// After a call of ``consume(_:)`` or ``finishInput()``: the output is delivered; once no such
    /// call is on the stack (one may run inside another's frame handling, from a write posted by a
    /// callback), the end of input is acted on and an ended host released.
    private func afterInput() {
        deliver()
        guard depth == 0 else { return }
        if inputFinished, connection?.inputEnded == true { endOfInput() }
        if endingStatus != nil { release() }
    }

    /// Every message read before the end was handled: a pause of the output ends, and the host
    /// ends once its work is done (``checkWorkDone()``). With a manual clock nothing can move time
    /// any more: once the work the input started has run as far as it can, it ends.
    private func endOfInput() {
        guard !inputHandled, endingStatus == nil, let host else { return }
        inputHandled = true
        host.outputQueue.resume()
        deliver(all: true)
        if manualClock {
            EventLoop.shared.drain()
            terminate(status: 0, end: .endOfInput)
        } else {
            checkWorkDone()
            if endingStatus == nil { EmbeddedHosts.waitsForWork(self) }
        }
    }

    /// Ends the host after the end of input once no request and no command sent is left; true
    /// once it is ending.
    @discardableResult
    func checkWorkDone() -> Bool {
        guard endingStatus == nil else { return true }
        guard inputHandled, let host, !host.hasWorkInFlight else { return false }
        terminate(status: 0, end: .endOfInput)
        return true
    }

    /// The client sent `exit`: the host ends at once with `code`; what follows is not served.
    private func exitRequested(_ code: Int32) {
        terminate(status: code, end: .exitNotification)
        // Inside the handling of the frame; released once that returns (``afterInput()``).
    }

    /// Cancels everything, delivers the output, closes it: what the stdio server does before it
    /// exits. The host is released once no input call is on the stack.
    private func terminate(status: Int32, end how: SessionEnd) {
        guard endingStatus == nil, let host else { return }
        endingStatus = status
        end.closing()
        logger.debug("ending (\(how)), status \(status)")
        if let recorder {
            // What was queued stands before the end's step (ServerLifecycle.endRecording).
            deliver(all: true)
            recorder.sessionEnded(how, status: status)
        }
        // Messages after `exit` in the same input are not served: no command starts.
        host.isStopping = true
        host.cancelEverything()
        // Closed first: what a pause holds is then written too, as the stdio server writes it.
        queue.close()
        deliver(all: true)
        stream?.finish()
        if depth == 0 { release() }
    }

    /// Releases the host once it has ended: its cancelled work runs its course (its output is
    /// refused), the last callback is made, and the host, its view-models and its callbacks are
    /// let go.
    private func release() {
        guard !released, let status = endingStatus, let host else { return }
        released = true
        // Messages read after `exit` may have made view-models: they go too.
        host.cancelEverything()
        EventLoop.shared.drain()
        host.log = nil
        host.onExit = nil
        host.engine.tracer = nil
        connection?.close()
        connection?.betweenFrames = nil
        if stream == nil { queue.abandon() }
        trace?.close()
        trace = nil
        if let recorder {
            recorder.finish()
            if recorder.failed { logger.warning("the recording could not be written whole (--record)") }
            self.recorder = nil
        }
        self.connection = nil
        self.host = nil
        EmbeddedHosts.released(self)
        let onEnd = onEnd
        onMessage = nil
        self.onEnd = nil
        let wake = end.ended(status: status)
        // The last callback, before a caller waiting for the end goes on.
        onEnd?(status)
        wake()
    }

    // MARK: Output

    /// Hands the output waiting to the callback, in order, or wakes the reader of the stream.
    func deliver(all: Bool = false) {
        // Nothing pushed since the last delivery: nothing to take, unless a pause ended (`all`).
        let pushed = pushes.load(ordering: .relaxed)
        guard pushed != deliveredPushes || all else { return }
        if let stream {
            deliveredPushes = pushed
            stream.wake()
            return
        }
        guard !delivering, let onMessage else { return }
        deliveredPushes = pushed
        delivering = true
        defer { delivering = false }
        while let (body, more) = queue.takeFirst() {
            trace?.recordOutgoing(body)
            recorder?.outgoing(body)
            onMessage(body)
            if !more, pushes.load(ordering: .relaxed) == deliveredPushes { return }
        }
    }
}

/// A weak reference to a session, for closures that capture it as a constant.
private struct WeakSession: Sendable {
    weak var session: EmbeddedSession?
}

/// The embedded hosts of the process, on the host thread: the ones with output to deliver, the
/// ones waiting for their work to end, and the idle hook that serves both.
@HostActor
enum EmbeddedHosts {
    private static var idleHook: Int?
    private static var open: [ObjectIdentifier: EmbeddedSession] = [:]
    /// Hosts whose queue had a push since the idle hook last delivered (listed by the queue's hook,
    /// on the pushing thread, once each: ``EmbeddedSession/listed``).
    private nonisolated static let withOutput = Mutex<[EmbeddedSession]>([])
    /// Hosts whose input ended, waiting for their requests and commands to end. Read at every idle
    /// turn; each access calls out to nothing while it lasts (the list is copied before hosts are
    /// asked), so it is not checked for exclusivity at run time.
    @exclusivity(unchecked) private static var waiting: [EmbeddedSession] = []

    /// How many embedded hosts are open (not released yet).
    static var count: Int { open.count }

    static func opened(_ session: EmbeddedSession) {
        open[ObjectIdentifier(session)] = session
        guard idleHook == nil else { return }
        idleHook = EventLoop.shared.addIdleHook { idle() }
    }

    nonisolated static func hasOutput(_ session: EmbeddedSession) {
        withOutput.withLock { $0.append(session) }
    }

    /// The hosts listed with output, and an empty list. Nonisolated: a closure made in a host-actor
    /// function and handed to `withLock` would check its isolation at run time, at each call.
    private nonisolated static func takeWithOutput() -> [EmbeddedSession] {
        withOutput.withLock { list in
            defer { list = [] }
            return list
        }
    }

    static func waitsForWork(_ session: EmbeddedSession) {
        waiting.append(session)
    }

    static func released(_ session: EmbeddedSession) {
        open[ObjectIdentifier(session)] = nil
    }

    /// The host thread has run out of work: delivers the output that work made, and ends the hosts
    /// whose input ended once their work is done.
    private static func idle() {
        while true {
            let sessions = takeWithOutput()
            if sessions.isEmpty { break }
            for session in sessions {
                session.listed.store(false, ordering: .relaxed)
                session.deliver()
            }
        }
        if !waiting.isEmpty {
            let sessions = waiting
            waiting = []
            // Ending a host may call back into an app that opens or closes others.
            let still = sessions.filter { !$0.checkWorkDone() }
            waiting = still + waiting
        }
    }
}
