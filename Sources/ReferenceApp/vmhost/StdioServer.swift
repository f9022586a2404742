#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VMHostEventLoop
import VMHostJSONRPC
import Logging
import VMHostRuntime
import VMHostCore
import VMHostWire
import AppComposition
import VMHost

/// The process around a ``Host``: stdin in, stdout out, signals, exit.
///
/// - stdout is duplicated at start and fd 1 pointed at stderr, so a stray `print` from any library
///   lands in the logs and never in the protocol stream; only the output writer writes frames
///   (from the host thread, or from its own thread while stdout is full).
/// - SIGPIPE is ignored; a closed stdout (EPIPE) ends the host quietly with status 0.
/// - EOF on stdin, SIGTERM and SIGINT cancel all work, flush the output and exit 0 (within a second).
/// - `exit` after `shutdown` exits 0, without it 1.
enum StdioServer {
    static func run(_ options: ServerOptions, framing: Framing) -> Never {
        signal(SIGPIPE, SIG_IGN)
        // Block SIGTERM/SIGINT in every thread; one thread waits for them with sigwait.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let protocolFD = dup(1)
        guard protocolFD >= 0 else { fatalError("cannot duplicate stdout") }
        _ = fcntl(protocolFD, F_SETFD, FD_CLOEXEC)
        dup2(2, 1)

        let level = options.logLevel
        LoggingSystem.bootstrap { label in StderrLogHandler(logLevel: level, label: label) }
        let logger = Logger(label: "vmhost")

        var trace: TraceRecorder?
        if let path = options.tracePath {
            do throws(TraceRecorder.TraceError) {
                trace = try TraceRecorder(path: path)
            } catch {
                FileHandleStderr.write("vmhost: \(error)\n")
                exit(2)
            }
        }
        let tracer = trace

        let waited = signals
        startThread {
            var signals = waited
            var received: Int32 = 0
            while sigwait(&signals, &received) == 0 {
                let number = received
                EventLoop.shared.execute {
                    HostActor.assumeIsolated { Lifecycle.terminate(code: 0, reason: "signal \(number)") }
                }
            }
        }

        EventLoop.shared.execute {
            HostActor.assumeIsolated {
                Lifecycle.start(options: options, framing: framing, protocolFD: protocolFD, logger: logger, trace: tracer)
            }
        }
        while true { pause() }
    }
}

/// The one running server's state, on the host thread.
@HostActor
enum Lifecycle {
    static var host: Host?
    static var connection: Connection?
    static var writer: OutputWriter<ChangedMessage>?
    static var trace: TraceRecorder?
    static var logger = Logger(label: "vmhost")
    static var exiting = false

    static func start(options: ServerOptions, framing: Framing, protocolFD: Int32, logger: Logger, trace: TraceRecorder?) {
        self.logger = logger
        self.trace = trace
        let composition = Composition(options: options)
        let host = Host(configuration: composition.configuration)
        host.log = { message in logger.debug("\(message)") }
        host.onExit = { code in terminate(code: code, reason: "exit notification") }
        if let trace {
            host.engine.tracer = { message in trace.record("in", message) }
        }
        var observe: (@Sendable ([UInt8]) -> Void)?
        if let trace { observe = { body in trace.recordOutgoing(body) } }
        let onClosed: @Sendable () -> Void = {
            EventLoop.shared.execute { HostActor.assumeIsolated { terminate(code: 0, reason: "stdout closed") } }
        }
        let writer = OutputWriter<ChangedMessage>(
            fd: protocolFD, framing: framing == .lsp ? .lsp : .ndjson, queue: host.outputQueue,
            producerWrites: true, observe: observe, onClosed: onClosed)
        // The host thread writes the output itself each time it runs out of work (the writer
        // thread only finishes writes that found stdout full).
        _ = EventLoop.shared.addIdleHook { writer.flush() }
        let connection = Connection(host: host, framing: framing, maxMessageBytes: options.maxMessageBytes)
        connection.onFramingDetected = { framing in writer.framing = framing }
        self.host = host
        self.connection = connection
        self.writer = writer
        logger.debug("vmhost \(vmhostVersion) serving on stdio (framing \(framing.rawValue), backend \(options.backend))")
        EventLoop.shared.watchInput(fd: 0) { event in
            switch event {
            case .data(let bytes): connection.consume(bytes)
            case .end:
                connection.finish()
                terminate(code: 0, reason: "end of input")
            }
        }
    }

    /// Cancels everything, flushes the output (at most a second), and exits with `code`.
    static func terminate(code: Int32, reason: String) {
        guard !exiting else { return }
        exiting = true
        logger.debug("exiting (\(reason))")
        EventLoop.shared.stopWatchingInput()
        host?.cancelEverything()
        writer?.flush()
        if let queue = host?.outputQueue {
            queue.close()
            _ = queue.waitUntilFlushed(nanoseconds: 900_000_000)
        }
        trace?.flush(nanoseconds: 200_000_000)
        StderrLogHandler.flush()
        exit(code)
    }
}

enum FileHandleStderr {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = Glibc.write(2, &bytes, bytes.count)
    }
}
