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

/// The host-thread side of an ``EmbeddedHost``: the transport of its ``SessionCore`` in process,
/// with no exit, no stdio, no signals: the bytes written to it fed to the core, the output
/// delivered to a callback or a stream, and the host released once the session ended.
@HostActor
package final class EmbeddedSession: SessionTransport {
    /// Where the output goes.
    package enum Delivery: Sendable {
        /// Called with each message, then once with the status after the last one.
        case callback(@Sendable ([UInt8]) -> Void, onEnd: (@Sendable (Int32) -> Void)?)
        /// Taken by a reader of ``EmbeddedHost/messages``.
        case stream
    }

    /// The session; nil once released.
    @exclusivity(unchecked) private var core: SessionCore?
    private let queue: OutputQueue<ChangedMessage>
    private let end: EmbeddedEnd
    @exclusivity(unchecked) private var onMessage: (@Sendable ([UInt8]) -> Void)?
    private var onEnd: (@Sendable (Int32) -> Void)?
    let stream: EmbeddedMessageStream?
    /// What sees every body delivered (the session's trace and recording).
    private let observe: (@Sendable ([UInt8]) -> Void)?

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
    /// Set once the session is ending: no more input is read.
    @exclusivity(unchecked) private var ending = false
    private var released = false

    init(server: Server, arguments: [String], logger: Logger?, delivery: Delivery, end: EmbeddedEnd) throws(EmbeddedHost.OpenError) {
        let configuration = server.configuration
        let parsed: ParsedArguments
        let settings: StandardSettings
        do throws(UsageError) {
            parsed = try ParsedArguments(arguments, options: server.allOptions)
            if parsed.flag("help") { throw UsageError("--help is for the command line; its text:\n" + server.help.text) }
            if parsed.flag("version") { throw UsageError("--version is for the command line: \(configuration.name) \(configuration.version)") }
            settings = try StandardSettings(parsed)
        } catch {
            throw EmbeddedHost.OpenError(.usage, error.message)
        }
        var logger = logger ?? Logger(label: configuration.name) { _ in SwiftLogNoOpLogHandler() }
        logger.logLevel = settings.logLevel
        if settings.recordPath != nil, case .stream = delivery {
            throw EmbeddedHost.OpenError(
                .usage, "--record needs a host whose messages go to a callback (the sequence is read later than the host writes)")
        }
        let files: SessionFiles
        do throws(SessionFileError) {
            files = try SessionFiles.open(settings)
        } catch {
            throw EmbeddedHost.OpenError(.trace, error.message)
        }
        let core: SessionCore
        do throws(UsageError) {
            core = try SessionCore(
                server: server, settings: settings, arguments: parsed, logger: logger, files: files, servingOn: "in process")
        } catch {
            throw EmbeddedHost.OpenError(.usage, error.message)
        }
        self.core = core
        self.queue = core.host.outputQueue
        self.end = end
        self.observe = core.observeOutgoing
        switch delivery {
        case .callback(let onMessage, let onEnd):
            self.onMessage = onMessage
            self.onEnd = onEnd
            self.stream = nil
        case .stream:
            self.stream = EmbeddedMessageStream(queue: core.host.outputQueue)
        }
        stream?.observe = core.observeOutgoing
        core.transport = self
        // Held weakly through an immutable capture: a `[weak self]` capture is a mutable box, whose
        // every read (once per frame, once per push) is checked for exclusivity at run time.
        let weakSelf = WeakSession(session: self)
        core.connection.betweenFrames = { weakSelf.session?.deliver() }
        // Output made by work that completes later (a command, a timer) is delivered when the host
        // thread has run out of work, with the other hosts' (``EmbeddedHosts``).
        queue.onPush {
            guard let self = weakSelf.session else { return }
            self.pushes.add(1, ordering: .relaxed)
            // Pushed by the input being handled: delivered when its call ends (``afterInput()``).
            if self.handlingInput.load(ordering: .relaxed) { return }
            if !self.listed.exchange(true, ordering: .relaxed) { EmbeddedHosts.hasOutput(self) }
        }
        EmbeddedHosts.opened(self)
    }

    // MARK: Input

    /// Reads `bytes` as a piece of the input stream; false when the input is closed.
    func consume(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !inputFinished, !ending, let core else { return false }
        enterInput()
        core.connection.consume(bytes)
        leaveInput()
        afterInput()
        return true
    }

    /// Reads `body` as one whole message, framed as the connection reads.
    func consumeMessage(_ body: UnsafeRawBufferPointer) -> Bool {
        guard let connection = core?.connection else { return false }
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

    /// The end of input (EOF on stdin): every message read is handled, then the session ends as
    /// its core decides (SPEC §7).
    func finishInput() {
        guard !inputFinished, let core else { return }
        inputFinished = true
        enterInput()
        core.connection.finish()
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
        guard depth == 0, let core else { return }
        if inputFinished, core.connection.inputEnded, !core.inputHandled {
            core.inputEnded()
            // Not ended yet: its requests and commands are still in flight.
            if core.ending == nil { EmbeddedHosts.waitsForWork(self) }
        }
        if ending { release() }
    }

    /// Ends the session after the end of input once its work is done; true once it is ending.
    func checkWorkDone() -> Bool {
        core?.checkWorkDone() ?? true
    }

    // MARK: SessionTransport

    package func outputResumed() {
        deliver(all: true)
    }

    package func writeQueued() {
        deliver(all: true)
    }

    /// The input is closed (`exit`, or the end of input): what follows is not served.
    package func sessionEnding(_ end: SessionEnd, status: Int32) {
        ending = true
        self.end.closing()
    }

    /// Closes the output and delivers what is left, as the stdio server writes it before it
    /// exits. The host is released once no input call is on the stack.
    package func sessionEnded(_ end: SessionEnd, status: Int32) {
        // Closed first: what a pause holds is then written too.
        queue.close()
        deliver(all: true)
        stream?.finish()
        if depth == 0 { release() }
    }

    /// Releases the host once it has ended: its cancelled work runs its course (its output is
    /// refused), the last callback is made, and the host, its view-models and its callbacks are
    /// let go.
    private func release() {
        guard !released, let core, let status = core.ending?.status else { return }
        released = true
        // Messages read after `exit` may have made view-models: they go too.
        core.host.cancelEverything()
        EventLoop.shared.drain()
        core.connection.close()
        core.connection.betweenFrames = nil
        if stream == nil { queue.abandon() }
        core.finish(traceWait: 1_000_000_000)
        self.core = nil
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
            observe?(body)
            onMessage(body)
            if !more, pushes.load(ordering: .relaxed) == deliveredPushes { return }
        }
    }
}

/// A weak reference to a session, for closures that capture it as a constant.
private struct WeakSession: Sendable {
    weak var session: EmbeddedSession?
}
