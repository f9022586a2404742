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

/// The process around one session (``StdioSession``, over its ``SessionCore``): stdin in, stdout
/// out, signals, exit (protocol/SPEC.md §7).
///
/// - Descriptors 0, 1 and 2 are checked first: a closed one is opened on /dev/null, so that nothing
///   the process opens later takes its number. Without stdin or stdout there is nothing to serve:
///   the process says so on stderr (if open) and exits 66 or 74.
/// - stdout is duplicated (to a descriptor above 2) and fd 1 pointed at stderr, so a stray `print`
///   from any library lands in the logs and never in the protocol stream; only the output writer
///   writes frames (from the host thread, or from its own thread while stdout is full).
/// - SIGPIPE is ignored; a closed stdout ends the host quietly with status 0, at once: the host
///   thread's `poll` watches stdout for its reader going away, so a host that writes nothing (its
///   output paused, or waiting for its commands after EOF) notices too; a write that fails with
///   EPIPE does.
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
    /// A trace or recording file that cannot be opened.
    static let fileErrorStatus: Int32 = 2

    static func run(_ server: Server, settings: StandardSettings, arguments: ParsedArguments) -> Never {
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
        let files: SessionFiles
        do throws(SessionFileError) {
            files = try SessionFiles.open(settings)
        } catch {
            ProcessOutput.stderr("\(name): \(error)\n")
            exit(fileErrorStatus)
        }

        // Block SIGTERM/SIGINT in every thread; the main thread waits for them with sigwait (below).
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
        let makeHandler: @Sendable (String) -> any LogHandler = { label in StderrLogHandler(logLevel: level, label: label) }
        LoggingSystem.bootstrap(makeHandler)
        // The same handler, made without reading the logging system back: its factory and metadata
        // provider cost a start-up 16,000 instructions (the provider's generic metadata).
        let logger = Logger(label: name, factory: makeHandler)

        let session = StdioSession(protocolFD: protocolFD, logger: logger)
        EventLoop.shared.execute {
            HostActor.assumeIsolated {
                // A closed stdout ends the host (SPEC §7), even while nothing is written: the host
                // thread's `poll` watches it for the error or hang-up its reader's going away
                // reports.
                EventLoop.shared.watchHangUp(fd: protocolFD) { session.requestEnd(StdioSession.outputClosed) }
                session.start(server: server, settings: settings, arguments: arguments, files: files)
            }
        }
        // The main thread has nothing else to do: it is the one that waits for the signals (a
        // thread of its own would cost a start-up a thread's creation and stack).
        var received: Int32 = 0
        guard sigwait(&signals, &received) == 0 else { while true { pause() } }
        session.requestEnd(received)
        // The host thread ends the process after flushing; if it is still busy (a long handler)
        // when the second is up, the process ends here.
        var remaining = timespec(tv_sec: 1, tv_nsec: 0)
        var request = remaining
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
        StderrLogHandler.flush()
        _exit(0)
    }
}
