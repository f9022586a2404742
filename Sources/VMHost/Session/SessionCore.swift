import Logging
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostHTTP
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire

/// One session of an app, whatever carries its bytes: its ``Host`` and ``Connection``, its trace
/// and recording, the end of its input (protocol/SPEC.md §7) and how it ended (``SessionEnd``).
///
/// A transport makes one, feeds it bytes (``connection``), tells it the input ended
/// (``inputEnded()``) and is told, through ``SessionTransport``, when to write what is queued and
/// when the session ends. Stdio and the hosts in process make theirs with
/// ``init(server:settings:arguments:logger:files:servingOn:)``, which makes the app too (one
/// session, one app); WebSocket makes one per connection over an app its sessions share
/// (``init(host:connection:secretMembers:recorder:trace:tracer:tracerOutgoing:logger:)``).
///
/// Everything a session holds is here: nothing about it is global or static.
@HostActor
package final class SessionCore {
    package let host: Host
    package let connection: Connection
    /// `--record`: this session's recording, if any.
    package let recorder: SessionRecorder?
    /// `--trace`: this session's own trace file, if any (a transport of many sessions may trace
    /// them all to one file it holds itself: ``tracer``).
    package let trace: SessionTrace?
    let logger: Logger
    /// Sees every body written, as written (the trace's and the recording's), from any thread.
    package nonisolated let observeOutgoing: (@Sendable ([UInt8]) -> Void)?
    /// The transport, told when to write and when the session ends (set by the transport once
    /// the core is made, before the first byte).
    package weak var transport: (any SessionTransport)?
    /// How the session ended and its status (the process's exit status on stdio), once it is
    /// ending; set once.
    package private(set) var ending: (end: SessionEnd, status: Int32)?
    /// Every message read before the end of input was handled: the session ends once no work is
    /// in flight (``checkWorkDone()``).
    package private(set) var inputHandled = false
    private var finished = false

    /// The session of a transport that serves one app per session (stdio, in process), served
    /// `servingOn` (`on stdio`, for the start-up log line): makes the app of `server` for
    /// `settings` (the recording, if any, given to the app while its kinds are made), its host and
    /// connection, and wires the files of `files`. Throws the app's usage errors (the files are
    /// then closed, a recording with its header only).
    package convenience init(
        server: Server, settings: StandardSettings, arguments: ParsedArguments, logger: Logger,
        files: SessionFiles, servingOn: String
    ) throws(UsageError) {
        let configuration = server.configuration
        var recorder: SessionRecorder?
        if let fd = files.recordFD {
            let recorded = SessionRecorder.recordedArguments(
                arguments, options: server.allOptions, leavingOut: SessionRecorder.ownOptions)
            recorder = SessionRecorder(
                fd: fd, arguments: recorded, manualClock: settings.manualClock, maxBytes: settings.maxRecordBytes,
                budget: settings.recordBudget)
        }
        let app: PreparedApp
        do throws(UsageError) {
            app = try server.prepareApp(settings: settings, arguments: arguments, logger: logger, recorder: recorder)
        } catch {
            recorder?.finish()
            files.closeTrace()
            throw error
        }
        let host = Host(configuration: app.host)
        let connection = Connection(host: host, framing: settings.framing, maxMessageBytes: settings.maxMessageBytes)
        let trace = files.traceFD.map {
            SessionTrace(
                fd: $0, redaction: host.redaction(secretMembers: configuration.secretMembers),
                maxBytes: settings.maxTraceBytes)
        }
        self.init(
            host: host, connection: connection, secretMembers: configuration.secretMembers,
            recorder: recorder, trace: trace, logger: logger)
        let summary = app.summary.map { ", \($0)" } ?? ""
        logger.debug(
            "\(configuration.name) \(configuration.version) serving \(servingOn) (framing \(settings.framing.rawValue)\(summary))")
    }

    /// A session of `host` read through `connection`, traced to `trace` (its own) or `tracer`
    /// (every message read, to a file the transport holds) and recorded by `recorder`, if any.
    package init(
        host: Host, connection: Connection, secretMembers: Set<String>,
        recorder: SessionRecorder?, trace: SessionTrace?, tracer: (@Sendable (JSON) -> Void)? = nil,
        tracerOutgoing: (@Sendable ([UInt8]) -> Void)? = nil, logger: Logger
    ) {
        self.host = host
        self.connection = connection
        self.recorder = recorder
        self.trace = trace
        self.logger = logger
        if let trace {
            host.engine.tracer = { message in trace.record("in", message) }
        } else if let tracer {
            host.engine.tracer = tracer
        }
        recorder?.attach(to: host, secretMembers: secretMembers)
        var traceOut = tracerOutgoing
        if let trace { traceOut = { @Sendable body in trace.recordOutgoing(body) } }
        switch (traceOut, recorder) {
        case (nil, nil): observeOutgoing = nil
        case (let traceOut?, nil): observeOutgoing = traceOut
        case (nil, let recorder?): observeOutgoing = { body in recorder.outgoing(body) }
        case (let traceOut?, let recorder?):
            observeOutgoing = { body in
                traceOut(body)
                recorder.outgoing(body)
            }
        }
        host.log = { message in logger.debug("\(message)") }
        // Held weakly through an immutable capture (see ``WeakSessionCore``).
        let weakSelf = WeakSessionCore(core: self)
        host.onExit = { code in weakSelf.core?.end(.exitNotification, status: code) }
    }

    // MARK: The end of input

    /// Every message read before the end of input was handled (SPEC §7): a pause of the output
    /// ends, and the session ends once its requests are answered and its commands sent have ended
    /// (``checkWorkDone()``, which the transport asks each time its host runs out of work), each
    /// bounded by the app's own deadlines. With a manual clock nothing can move time any more:
    /// once the work the input started has run as far as it can, what still waits is cancelled
    /// and the session ends.
    package func inputEnded() {
        guard !inputHandled, ending == nil else { return }
        inputHandled = true
        host.outputQueue.resume()
        transport?.outputResumed()
        if host.configuration.clock is ManualClock {
            EventLoop.shared.drain()
            end(.endOfInput, status: 0)
        } else {
            checkWorkDone()
        }
    }

    /// Ends the session after the end of input once no request and no command sent is left;
    /// true once it is ending.
    @discardableResult
    package func checkWorkDone() -> Bool {
        guard ending == nil else { return true }
        guard inputHandled, !host.hasWorkInFlight else { return false }
        end(.endOfInput, status: 0)
        return true
    }

    // MARK: The end

    /// Ends the session as `end` with `status`, once: the transport stops its input; what was
    /// queued is written before the recording's last step; the messages still to be read are
    /// not served (no command starts); every piece of work is cancelled; then the transport
    /// writes what is left and closes its output (``SessionTransport/sessionEnded(_:status:)``).
    package func end(_ end: SessionEnd, status: Int32) {
        guard ending == nil else { return }
        ending = (end, status)
        transport?.sessionEnding(end, status: status)
        logger.debug("ending (\(end)), status \(status)")
        if let recorder {
            transport?.writeQueued()
            recorder.sessionEnded(end, status: status)
        }
        host.isStopping = true
        host.cancelEverything()
        transport?.sessionEnded(end, status: status)
    }

    /// Closes the session's files once its output is written: the trace (what it holds written
    /// within `traceWait` nanoseconds) and the recording; the host's hooks are let go.
    package func finish(traceWait: UInt64) {
        guard !finished else { return }
        finished = true
        host.log = nil
        host.onExit = nil
        host.engine.tracer = nil
        trace?.close(waiting: traceWait)
        if let recorder {
            recorder.finish()
            if recorder.failed { logger.warning("the recording could not be written whole (--record)") }
        }
    }
}

/// What carries a session's bytes, as its ``SessionCore`` sees it: each call on the host thread.
@HostActor
package protocol SessionTransport: AnyObject {
    /// A pause of the output ended at the end of input: what it held may be delivered now.
    func outputResumed()
    /// Writes (or hands over) what is queued now, before a recording's last step.
    func writeQueued()
    /// The session is ending (its input is no longer read), before its work is cancelled.
    func sessionEnding(_ end: SessionEnd, status: Int32)
    /// The session's work is cancelled: what is left is written, and the output closed.
    func sessionEnded(_ end: SessionEnd, status: Int32)
}

/// A weak reference to a session core, for closures that capture it as a constant: a `[weak
/// self]` capture is a mutable box, whose every read is checked for exclusivity at run time.
package struct WeakSessionCore: Sendable {
    package weak var core: SessionCore?

    package init(core: SessionCore) { self.core = core }
}
