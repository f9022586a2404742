#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostHTTP
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// The process around a ``Host``: stdin in, stdout out, signals, exit (protocol/SPEC.md §7).
///
/// - Descriptors 0, 1 and 2 are checked first: a closed one is opened on /dev/null, so that nothing
///   the process opens later takes its number. Without stdin or stdout there is nothing to serve:
///   the process says so on stderr (if open) and exits 66 or 74.
/// - stdout is duplicated (to a descriptor above 2) and fd 1 pointed at stderr, so a stray `print`
///   from any library lands in the logs and never in the protocol stream; only the output writer
///   writes frames (from the host thread, or from its own thread while stdout is full).
/// - SIGPIPE is ignored; a closed stdout ends the host quietly with status 0, at once: a thread
///   watches stdout for its reader going away, so a host that writes nothing (its output paused,
///   or waiting for its commands after EOF) notices too; a write that fails with EPIPE does.
/// - Started with stdin on a terminal, it prints one line on stderr saying what it reads.
/// - EOF on stdin means no more input, not stop: every message read is handled, commands
///   included, and the host waits until every request is answered and every command sent has
///   ended (each bounded by the app's own deadlines); then it cancels what is left, flushes the
///   output and exits 0. With a manual clock, which nothing can move any more, it waits for
///   nothing: what still runs once the input is handled is cancelled.
/// - SIGTERM and SIGINT cancel all work, flush the output and exit 0, within a second: if the
///   host thread is still busy a second after a signal, the process ends anyway.
/// - `exit` after `shutdown` exits 0, without it 1.
enum StdioServer {
    /// EX_NOINPUT: started with stdin closed.
    static let noInputStatus: Int32 = 66
    /// EX_IOERR: started with stdout closed.
    static let noOutputStatus: Int32 = 74
    /// EX_OSERR: no descriptor or thread for the protocol stream.
    static let systemErrorStatus: Int32 = 71
    /// A trace file that cannot be opened.
    static let traceErrorStatus: Int32 = 2

    static func run(_ server: Server, settings: ServerSettings, arguments: ParsedArguments) -> Never {
        let name = server.configuration.name
        let closed = ProcessOutput.reopenClosedStandardDescriptors()
        if closed.contains(0) {
            ProcessOutput.stderr("\(name): stdin (fd 0) is closed: there is no input to serve\n")
            exit(noInputStatus)
        }
        if closed.contains(1) {
            ProcessOutput.stderr("\(name): stdout (fd 1) is closed: there is no way to answer\n")
            exit(noOutputStatus)
        }
        if isatty(0) == 1 {
            // Someone started the host by hand: say what it waits for (stdout stays for frames).
            ProcessOutput.stderr(
                "\(name): reading JSON-RPC 2.0 requests, one per line, e.g. "
                    + "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"host.describe\"}; Ctrl-D ends; --help explains\n")
        }
        signal(SIGPIPE, SIG_IGN)

        // Opened before signals are blocked, and without blocking: a FIFO nobody reads is refused
        // at once rather than waited on.
        var traceFD: Int32?
        if let path = settings.tracePath {
            do throws(TraceRecorder.TraceError) {
                traceFD = try TraceRecorder.open(path: path)
            } catch {
                ProcessOutput.stderr("\(name): \(error)\n")
                exit(traceErrorStatus)
            }
        }
        let trace = traceFD
        let recording = openRecording(settings, name: name)

        // Block SIGTERM/SIGINT in every thread; one thread waits for them with sigwait.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        // 0, 1 and 2 are all open now, so the copy lands above them.
        let protocolFD = dup(1)
        guard protocolFD > 2 else {
            ProcessOutput.stderr("\(name): cannot duplicate stdout: \(String(cString: strerror(errno)))\n")
            exit(systemErrorStatus)
        }
        _ = fcntl(protocolFD, F_SETFD, FD_CLOEXEC)
        dup2(2, 1)

        let level = settings.logLevel
        LoggingSystem.bootstrap { label in StderrLogHandler(logLevel: level, label: label) }
        let logger = Logger(label: name)

        let waited = signals
        startThread {
            var signals = waited
            var received: Int32 = 0
            while sigwait(&signals, &received) == 0 {
                let number = received
                EventLoop.shared.execute {
                    HostActor.assumeIsolated { ServerLifecycle.terminate(code: 0, end: .signal(number)) }
                }
                // The host thread ends the process after flushing; if it is still busy (a long
                // handler) when the second is up, the process ends here.
                var remaining = timespec(tv_sec: 1, tv_nsec: 0)
                var request = remaining
                while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
                StderrLogHandler.flush()
                _exit(0)
            }
        }

        EventLoop.shared.execute {
            HostActor.assumeIsolated {
                ServerLifecycle.start(
                    server: server, settings: settings, arguments: arguments, protocolFD: protocolFD,
                    logger: logger, traceFD: trace, recordFD: recording)
            }
        }
        watchForClosedOutput(fd: protocolFD)
        while true { pause() }
    }

    /// Ends the host once the reader of `fd` is gone (SPEC §7), even while nothing is written: a
    /// thread waits in `poll` for the error or hang-up a pipe or socket reports then (no event is
    /// asked for, so a reader that is merely slow never wakes it; a file never reports one).
    static func watchForClosedOutput(fd: Int32) {
        startThread {
            var watched = pollfd(fd: fd, events: 0, revents: 0)
            while true {
                watched.revents = 0
                let ready = poll(&watched, 1, -1)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0, Int32(watched.revents) & (POLLERR | POLLHUP) != 0 else { return }
                EventLoop.shared.execute {
                    HostActor.assumeIsolated { ServerLifecycle.terminate(code: 0, end: .outputClosed) }
                }
                return
            }
        }
    }
}

/// The one running server's state, on the host thread.
@HostActor
enum ServerLifecycle {
    static var host: Host?
    static var connection: Connection?
    static var writer: OutputWriter<ChangedMessage>?
    static var trace: TraceRecorder?
    static var logger = Logger(label: "vmhost")
    static var exiting = false
    static var protocolFD: Int32 = -1

    static func start(
        server: Server, settings: ServerSettings, arguments: ParsedArguments, protocolFD: Int32, logger: Logger,
        traceFD: Int32?, recordFD: Int32? = nil
    ) {
        self.logger = logger
        self.protocolFD = protocolFD
        let configuration = server.configuration
        startRecording(fd: recordFD, server: server, settings: settings, arguments: arguments)
        let app: Server.App
        do throws(UsageError) {
            app = try server.makeApp(settings: settings, arguments: arguments, logger: logger)
        } catch {
            server.fail(error.message)
        }
        // One session for the run: an HTTP client the app makes later is recorded or replayed too.
        HTTPSessionTransport.current = app.httpTransport
        let host = Host(configuration: app.host)
        host.log = { message in logger.debug("\(message)") }
        host.onExit = { code in terminate(code: code, end: .exitNotification) }
        var trace: TraceRecorder?
        if let traceFD {
            let redaction = host.redaction(secretMembers: configuration.secretMembers)
            let recorder = TraceRecorder(fd: traceFD, redaction: redaction, maxBytes: settings.maxTraceBytes)
            host.engine.tracer = { message in recorder.record("in", message) }
            trace = recorder
        }
        self.trace = trace
        var observe: (@Sendable ([UInt8]) -> Void)?
        if let trace { observe = { body in trace.recordOutgoing(body) } }
        observe = attachRecording(to: host, secretMembers: configuration.secretMembers, observe: observe)
        let onClosed: @Sendable () -> Void = {
            EventLoop.shared.execute { HostActor.assumeIsolated { terminate(code: 0, end: .outputClosed) } }
        }
        let writer = OutputWriter<ChangedMessage>(
            fd: protocolFD, framing: settings.framing == .lsp ? .lsp : .ndjson, queue: host.outputQueue,
            producerWrites: true, observe: observe, onClosed: onClosed)
        // The host thread writes the output itself each time it runs out of work (the writer
        // thread only finishes writes that found stdout full).
        _ = EventLoop.shared.addIdleHook { writer.flush() }
        let connection = Connection(host: host, framing: settings.framing, maxMessageBytes: settings.maxMessageBytes)
        connection.onFramingDetected = { framing in writer.framing = framing }
        self.host = host
        self.connection = connection
        self.writer = writer
        let summary = app.summary.map { ", \($0)" } ?? ""
        logger.debug(
            "\(configuration.name) \(configuration.version) serving on stdio (framing \(settings.framing.rawValue)\(summary))")
        connection.betweenFrames = {
            // A long backlog keeps its output moving, so that a client that reads sees it go.
            if host.outputQueue.pendingCount >= 256 { writer.flush() }
            // Looking for more input costs a system call: it is done after each 64 KiB of frames
            // handled, or a millisecond (slow frames), not after every frame. The event loop reads
            // too, each time the frames read are all handled.
            let now = EventLoop.monotonicNanoseconds()
            if connection.handledBytes &- readAheadMark.bytes >= readAheadInterval
                || now &- readAheadMark.time >= readAheadIntervalNanoseconds
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
            if connection.inputEnded { endOfInput(host) }
        }
        // After EOF: exits once no request and no command sent is left (see endOfInput).
        _ = EventLoop.shared.addIdleHook {
            if inputHandled && !host.hasWorkInFlight { terminate(code: 0, end: .endOfInput) }
        }
    }

    /// Set once every message read before EOF was handled.
    static var inputHandled = false

    /// Every message read before EOF was handled (SPEC §7): a pause of the output ends, and the
    /// host exits once its requests are answered and its commands sent have ended (the idle hook
    /// above), each bounded by the app's own deadlines. With a manual clock nothing can move time
    /// any more: once the work the input started has run as far as it can, what still waits is
    /// cancelled and the host exits.
    static func endOfInput(_ host: Host) {
        guard !inputHandled else { return }
        inputHandled = true
        host.outputQueue.resume()
        if host.configuration.clock is ManualClock {
            EventLoop.shared.drain()
            terminate(code: 0, end: .endOfInput)
        } else if !host.hasWorkInFlight {
            terminate(code: 0, end: .endOfInput)
        }
    }

    /// At most this many bytes of frames wait to be handled; reading ahead stops there.
    static let readAheadLimit = ServerSettings.maxQueuedInputBytes
    /// Input is read ahead after each this many bytes of frames handled, or this long.
    static let readAheadInterval = 64 * 1024
    static let readAheadIntervalNanoseconds: UInt64 = 1_000_000
    /// ``Connection/handledBytes`` and the monotonic clock when the input was last read ahead.
    static var readAheadMark: (bytes: Int, time: UInt64) = (0, 0)
    /// Read into without being zeroed (as the event loop's input buffer), on first use.
    static let readAheadBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// Reads the input that is there already, without waiting, while few frames wait, so that a
    /// client's pipe keeps moving while a backlog is handled. Where the end of input is seen changes
    /// nothing of what is written (SPEC §7).
    static func readAhead(_ connection: Connection) {
        while !connection.inputEnded, !exiting, connection.waitingBytes < readAheadLimit {
            var ready = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 0) > 0 else { return }
            let count = read(0, readAheadBuffer.baseAddress, readAheadBuffer.count)
            if count < 0 && (errno == EINTR || errno == EAGAIN) { return }
            if count > 0 {
                connection.consume(UnsafeRawBufferPointer(rebasing: readAheadBuffer[..<count]))
            } else {
                EventLoop.shared.stopWatchingInput()
                connection.finish()
            }
        }
    }

    /// Waits until `queue` is written: as long as the client keeps reading, every frame is written
    /// whole whatever the backlog; once a second passes with no progress (a client that stopped
    /// reading), or after 30 s in all (a client that trickles), what is left is dropped.
    static let flushCeilingNanoseconds: UInt64 = 30_000_000_000

    static func flush(_ queue: OutputQueue<ChangedMessage>) {
        let fd = protocolFD
        var last = (queue.pendingCount, queue.pendingPlainBytes)
        let start = EventLoop.monotonicNanoseconds()
        while !queue.waitUntilFlushed(nanoseconds: 1_000_000_000) {
            // A reader that trickles cannot keep the process alive for ever.
            guard EventLoop.monotonicNanoseconds() - start < flushCeilingNanoseconds else { return }
            let now = (queue.pendingCount, queue.pendingPlainBytes)
            var room = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let progressed = now != last || poll(&room, 1, 0) > 0
            guard progressed else { return }
            last = now
        }
    }

    /// Cancels everything, flushes the output (see ``flush(_:)``), and exits with `code`.
    static func terminate(code: Int32, end: SessionEnd) {
        guard !exiting else { return }
        exiting = true
        logger.debug("exiting (\(end))")
        EventLoop.shared.stopWatchingInput()
        endRecording(end, code: code)
        host?.cancelEverything()
        writer?.flush()
        if let queue = host?.outputQueue {
            queue.close()
            flush(queue)
        }
        trace?.flush(nanoseconds: 200_000_000)
        finishRecording()
        StderrLogHandler.flush()
        exit(code)
    }
}

/// Writing outside the protocol stream, and the standard descriptors.
enum ProcessOutput {
    /// Writes `text` to stderr (fd 2), directly.
    static func stderr(_ text: String) {
        var bytes = Array(text.utf8)
        _ = write(2, &bytes, bytes.count)
    }

    /// Opens /dev/null on each of fds 0, 1 and 2 that is closed (in that order, so each lands on its
    /// own number) and returns the numbers that were closed.
    static func reopenClosedStandardDescriptors() -> Set<Int32> {
        var closed: Set<Int32> = []
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            closed.insert(fd)
        }
        for fd in closed.sorted() {
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != fd {
                dup2(opened, fd)
                close(opened)
            }
        }
        return closed
    }
}
