#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostHTTP
@_spi(Transport) import VMHostWire

/// The one session of a `vmhost` process, as stdio carries it (protocol/SPEC.md §7): stdin read
/// into its ``SessionCore`` (ahead by at most ``StandardSettings/maxQueuedInputBytes``), its
/// output written to the protocol stream, and the process ended with the session.
@HostActor
final class StdioSession: SessionTransport {
    /// The protocol stream (stdout's copy).
    nonisolated let protocolFD: Int32
    let logger: Logger
    private var core: SessionCore?
    private var writer: OutputWriter<ChangedMessage>?
    /// Set once the session ends: the process exits.
    private var exiting = false
    /// An end asked for from another thread (``requestEnd(_:)``): 0 none, -1 stdout closed, else
    /// the signal's number. Read between frames too, so that input that keeps coming never holds
    /// the end back (and a closed stdout not even the frames read).
    nonisolated private let requestedEnd = Atomic<Int32>(0)
    /// ``Connection/handledBytes`` and the monotonic clock when the input was last read ahead.
    private var readAheadMark: (bytes: Int, time: UInt64) = (0, 0)
    /// Read into without being zeroed (as the event loop's input buffer), on first use.
    private lazy var readAheadBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// At most this many bytes of frames wait to be handled; reading ahead stops there.
    static let readAheadLimit = StandardSettings.maxQueuedInputBytes
    /// Input is read ahead after each this many bytes of frames handled, or this long.
    static let readAheadInterval = 64 * 1024
    static let readAheadIntervalNanoseconds: UInt64 = 1_000_000
    /// How long the output may take to be written at the end (see ``flush(_:)``).
    static let flushCeilingNanoseconds: UInt64 = 30_000_000_000

    nonisolated init(protocolFD: Int32, logger: Logger) {
        self.protocolFD = protocolFD
        self.logger = logger
    }

    /// Makes the session (the app, its host and files) and starts reading stdin. A usage error of
    /// the app ends the process with status 64.
    func start(server: Server, settings: StandardSettings, arguments: ParsedArguments, files: SessionFiles) {
        let core: SessionCore
        do throws(UsageError) {
            core = try SessionCore(
                server: server, settings: settings, arguments: arguments, logger: logger, files: files, servingOn: "on stdio")
        } catch {
            server.fail(error.message)
        }
        self.core = core
        core.transport = self
        let host = core.host
        let connection = core.connection
        let onClosed: @Sendable () -> Void = { self.requestEnd(Self.outputClosed) }
        let writer = OutputWriter<ChangedMessage>(
            fd: protocolFD, framing: settings.framing == .lsp ? .lsp : .ndjson, queue: host.outputQueue,
            producerWrites: true, observe: core.observeOutgoing, onClosed: onClosed)
        self.writer = writer
        // The host thread writes the output itself each time it runs out of work (the writer
        // thread only finishes writes that found stdout full).
        _ = EventLoop.shared.addIdleHook { writer.flush() }
        connection.onFramingDetected = { framing in writer.framing = framing }
        connection.betweenFrames = { [unowned self] in
            // stdout closed while frames are handled: the session ends now, not once every frame
            // read (and every frame still arriving) is handled (SPEC §7). After a signal, what was
            // read is answered, and no more is read (``readAhead(_:)``).
            if requestedEnd.load(ordering: .relaxed) == Self.outputClosed { endAsRequested() }
            // A long backlog keeps its output moving, so that a client that reads sees it go.
            if host.outputQueue.pendingCount >= 256 { writer.flush() }
            // Looking for more input costs a system call: it is done after each 64 KiB of frames
            // handled, or a millisecond (slow frames), not after every frame. The event loop reads
            // too, each time the frames read are all handled.
            let now = EventLoop.monotonicNanoseconds()
            if connection.handledBytes &- readAheadMark.bytes >= Self.readAheadInterval
                || now &- readAheadMark.time >= Self.readAheadIntervalNanoseconds
            {
                readAheadMark = (connection.handledBytes, now)
                readAhead(connection)
            }
        }
        EventLoop.shared.watchInput(fd: 0) { event in
            switch event {
            case .data(let bytes): connection.consume(bytes)
            case .end: connection.finish()
            }
            if connection.inputEnded { core.inputEnded() }
        }
        // After EOF: exits once no request and no command sent is left.
        _ = EventLoop.shared.addIdleHook { core.checkWorkDone() }
    }

    /// Reads the input that is there already, without waiting, while few frames wait, so that a
    /// client's pipe keeps moving while a backlog is handled. Where the end of input is seen changes
    /// nothing of what is written (SPEC §7).
    private func readAhead(_ connection: Connection) {
        while !connection.inputEnded, !exiting, requestedEnd.load(ordering: .relaxed) == 0,
            connection.waitingBytes < Self.readAheadLimit
        {
            // stdout is looked at too: in a turn that input keeps going, the event loop's own
            // watch of its hang-up (SPEC §7) waits for the turn to end.
            var ready = (pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: protocolFD, events: 0, revents: 0))
            let count = withUnsafeMutableBytes(of: &ready) { poll($0.baseAddress!.assumingMemoryBound(to: pollfd.self), 2, 0) }
            if Int32(ready.1.revents) & (POLLERR | POLLHUP) != 0 {
                requestEnd(Self.outputClosed)
                return
            }
            guard count > 0, ready.0.revents != 0 else { return }
            let bytesRead = read(0, readAheadBuffer.baseAddress, readAheadBuffer.count)
            if bytesRead < 0 && (errno == EINTR || errno == EAGAIN) { return }
            if bytesRead > 0 {
                connection.consume(UnsafeRawBufferPointer(rebasing: readAheadBuffer[..<bytesRead]))
            } else {
                EventLoop.shared.stopWatchingInput()
                connection.finish()
            }
        }
    }

    /// The value of ``requestedEnd`` for a closed stdout.
    nonisolated static let outputClosed: Int32 = -1

    /// Asks, from any thread, for the session to end: `signal`'s number, or ``outputClosed``. The
    /// host thread ends it at its next turn; input is no longer read ahead, and a closed stdout
    /// ends it after the frame being handled.
    nonisolated func requestEnd(_ signal: Int32) {
        guard requestedEnd.compareExchange(expected: 0, desired: signal, ordering: .relaxed).exchanged else { return }
        EventLoop.shared.execute { HostActor.assumeIsolated { self.endAsRequested() } }
    }

    /// Ends the session as ``requestEnd(_:)`` asked.
    private func endAsRequested() {
        let asked = requestedEnd.load(ordering: .relaxed)
        terminate(code: 0, end: asked == Self.outputClosed ? .outputClosed : .signal(asked))
    }

    /// Ends the session as `end` (a signal, a closed output), or the process at once when no
    /// session was made yet; exits with `code`.
    private func terminate(code: Int32, end: SessionEnd) {
        guard let core else {
            guard !exiting else { return }
            exiting = true
            StderrLogHandler.flush()
            exit(code)
        }
        core.end(end, status: code)
    }

    // MARK: SessionTransport

    package func outputResumed() {}

    /// What was queued is written first (for at most 200 ms, as a client that reads takes it), so
    /// that it stands before the recording's `close` or `exit` step.
    package func writeQueued() {
        writer?.flush()
        _ = core?.host.outputQueue.waitUntilFlushed(nanoseconds: 200_000_000)
    }

    package func sessionEnding(_ end: SessionEnd, status: Int32) {
        exiting = true
        EventLoop.shared.stopWatchingInput()
    }

    /// Flushes the output (see ``flush(_:)``), closes the session's files and exits with `status`.
    package func sessionEnded(_ end: SessionEnd, status: Int32) {
        writer?.flush()
        if let queue = core?.host.outputQueue {
            queue.close()
            flush(queue)
        }
        core?.finish(traceWait: 200_000_000)
        StderrLogHandler.flush()
        exit(status)
    }

    /// Waits until `queue` is written: as long as the client keeps reading, every frame is written
    /// whole whatever the backlog; once a second passes with no progress (a client that stopped
    /// reading), or after 30 s in all (a client that trickles), what is left is dropped.
    private func flush(_ queue: OutputQueue<ChangedMessage>) {
        let fd = protocolFD
        var last = (queue.pendingCount, queue.pendingPlainBytes)
        let start = EventLoop.monotonicNanoseconds()
        while !queue.waitUntilFlushed(nanoseconds: 1_000_000_000) {
            // A reader that trickles cannot keep the process alive for ever.
            guard EventLoop.monotonicNanoseconds() - start < Self.flushCeilingNanoseconds else { return }
            let now = (queue.pendingCount, queue.pendingPlainBytes)
            var room = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let progressed = now != last || poll(&room, 1, 0) > 0
            guard progressed else { return }
            last = now
        }
    }
}
