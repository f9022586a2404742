#if WebSocket
#if canImport(Glibc)
import Glibc
#endif
import Logging
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop

/// An app's view-models served to browsers: JSON-RPC 2.0 over WebSocket at `/rpc`, a folder of
/// static files at `/`. The whole of an app's web `main`, as ``Server/run()`` is of its stdio one.
///
/// ```swift
/// import VMHost
/// import VMHostWebSocket
///
/// let server = Server(name: "todo", version: "1.0.0") { environment in
///     ServedApp(kinds: [TodoListViewModel.factory(store: TodoStore(clock: environment.clock))])
/// }
/// await WebSocketServer(server).run()
/// ```
///
/// The server owns the process as ``Server`` does: it reads the command line (the options of
/// ``options``: `--listen`, `--workers`, `--static`, `--token`, `--allow-origin`, `--allow-host`,
/// the limits, then the standard options of a server but `--framing`, with `--record DIR` taking a
/// folder, then the app's own, `--version` and `--help`), writes the logs on stderr, and serves until
/// SIGTERM or SIGINT. Each WebSocket connection is a session of its own (its own view-models,
/// subscriptions and locale) with a ``Host`` made from the app's kinds (``ServedApp/connectionKinds``
/// when the app makes them per connection). The sessions are spread over worker processes
/// (`--workers`, ``WorkerPool``): the process started holds the port and starts the executable
/// again as each worker. The transport is specified in protocol/SPEC.md §12.
public struct WebSocketServer: Sendable {
    /// The server whose kinds are served (its name, version, options and kinds).
    public let server: Server
    /// The command in `--help` and the prefix of what is said on stderr; by default the
    /// server's name.
    public var command: String
    /// One sentence for `--help`: what the server is.
    public var overview: String
    /// A paragraph or two for `--help`, after the overview.
    public var discussion: String
    /// The folder served at `/` when `--static` is not given; nil: none (`/rpc` only).
    public var staticDirectory: String?
    /// Where `/` redirects when the static folder has no `index.html` (a page inside it,
    /// `/web/demo/`); nil: no redirect.
    public var indexRedirect: String?
    /// What the reference app's server adds to the workers (its own shared memory, the default
    /// of `--workers`, its recordings' comments).
    @_spi(Transport) public var additions = Additions()

    /// The reference app's additions to a ``WebSocketServer``.
    @_spi(Transport)
    public struct Additions: Sendable {
        /// The bytes of memory the supervisor shares with every worker (``WorkerLink/appRegion``); 0: none.
        public var sharedRegionBytes = 0
        /// Given the shared memory on the host thread, before the app is made.
        public var attachSharedRegion: (@HostActor @Sendable (SharedRegion) -> Void)?
        /// The default of `--workers` for a command line (nil: the number of cores).
        public var defaultWorkers: (@Sendable (ParsedArguments) -> Int?)?
        /// What `--help` says of the default of `--workers`.
        public var defaultWorkersHelp: String?
        /// Comments said among the first lines of every recording of a server started with a
        /// command line.
        public var recordingComments: (@Sendable (ParsedArguments) -> [String])?

        /// No additions.
        public init() {}
    }

    /// The app's kinds of `server` served to browsers, named as `server` is unless `command` says
    /// otherwise; `--help` says `overview` and `discussion` (by default a description of this
    /// transport).
    public init(_ server: Server, command: String? = nil, overview: String? = nil, discussion: String? = nil) {
        self.server = server
        let command = command ?? server.configuration.name
        self.command = command
        self.overview = overview
            ?? "Serves \(server.configuration.name)'s view-models to browsers: JSON-RPC 2.0 over WebSocket at /rpc, the --static folder at /."
        self.discussion = discussion ?? """
            Each WebSocket connection is its own session (its own view-models, subscriptions and
            locale) speaking the protocol of vmhost's protocol/SPEC.md, one message per text frame.
            Logs go to stderr.

            The sessions are spread over worker processes (--workers), each with its own host
            thread; the process started holds the port and hands each connection to the least busy
            worker. With --workers 0 the process started serves every session itself and starts no
            other.

            Example:
              \(command) --listen 127.0.0.1:8787 --static public   # then open http://127.0.0.1:8787/
            """
    }

    /// Reads the process's command line and serves until SIGTERM or SIGINT; never returns. A usage
    /// error is written to stderr with the usage and exits 64; a port that cannot be listened on,
    /// or a worker that cannot start, exits 1.
    public func run() async -> Never {
        await run(arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// Like ``run()``, with the command line `arguments` (without the program's name). A worker
    /// process is this executable started again with the process's own command line: its `main`
    /// must come to this call with the same `arguments` and the same server.
    public func run(arguments: [String]) async -> Never {
        let options = self.options
        let parsed: ParsedArguments
        let settings: StandardSettings
        let workers: Int
        var transport = WebSocketTransport.Options()
        do throws(UsageError) {
            parsed = try ParsedArguments(arguments, options: options)
            if parsed.flag("help") {
                print(help.text, terminator: "")
                exit(0)
            }
            if parsed.flag("version") {
                print("\(server.configuration.name) \(server.configuration.version)")
                exit(0)
            }
            settings = try StandardSettings(parsed)
            transport = try Self.transportOptions(parsed, arguments: arguments, settings: settings)
            if transport.staticDirectory == nil, let staticDirectory {
                transport.staticDirectory = staticDirectory
                transport.indexRedirect = indexRedirect
            }
            workers = try workerCount(parsed)
        } catch {
            fail(error.message)
        }

        var sessionFolder: SessionFolder?
        if let directory = transport.sessionDirectory {
            // Made (or refused) before any worker starts.
            switch SessionFolder.prepare(directory) {
            case .failure(let refusal):
                Self.writeStderr("\(command): \(refusal)\n")
                exit(2)
            case .success(let folder):
                sessionFolder = folder
            }
        }
        // At the server's start (not a worker's, which may replace one whose sessions' pages are
        // coming back): what no page can resume any more (kept longer ago than the grace period)
        // is removed.
        let sweep = { _ = sessionFolder?.sweep(olderThan: .milliseconds(transport.resumeGraceMilliseconds)) }
        if let directory = settings.recordPath {
            // Made (or refused) before any worker starts; each worker's sessions then take the
            // next free session-N.jsonl of it.
            do throws(SessionRecorder.RecordingError) {
                try SessionRecorder.prepare(directory: directory)
            } catch {
                Self.writeStderr("\(command): \(error)\n")
                exit(2)
            }
        }

        let link: WorkerLink
        do throws(WorkerError) {
            if workers == 0 {
                sweep()
                let command = self.command
                Self.warnIfExposed(transport, log: { Self.writeStderr("\(command) warning: \($0)\n") })
                let listenHost = transport.host, token = transport.token
                link = try WorkerLink.singleProcess(host: transport.host, port: transport.port) { port in
                    Self.announce(command: command, listenHost: listenHost, port: port, token: token)
                }
            } else if let worker = try WorkerLink.current(appRegionBytes: additions.sharedRegionBytes) {
                link = worker
            } else {
                sweep()
                supervise(transport: transport, workers: workers, logLevel: settings.logLevel)
            }
        } catch {
            Self.writeStderr("\(command): \(error)\n")
            exit(1)
        }
        await serve(link: link, transport: transport, settings: settings, parsed: parsed, workers: workers)
    }

    /// Every option the server reads, in the order `--help` lists them.
    public var options: [OptionSpec] {
        let limits = WebSocketTransport.defaultSessionLimits
        let defaultWorkers = additions.defaultWorkersHelp ?? "the number of cores"
        return [
            OptionSpec(
                "listen", value: "HOST:PORT", defaultValue: "127.0.0.1:8787",
                abstract: "The address to listen on. Port 0 picks a free port; the URL is printed on stderr.",
                discussion: "Listening beyond loopback exposes every session to the network: use --token then."),
            OptionSpec(
                "allow-origin", value: "ORIGIN",
                abstract: "An origin besides the server's own whose pages may connect, e.g. http://localhost:3000 (repeat the option or separate with commas)."),
            OptionSpec(
                "allow-host", value: "NAME",
                abstract: "A name besides localhost, IP addresses and the --listen address that requests may give in their Host header (repeat the option or separate with commas); any other name is refused with 403."),
            OptionSpec(
                "token", value: "TOKEN",
                abstract: "Require 'Authorization: Bearer TOKEN' or '?token=TOKEN' on the WebSocket handshake."),
            OptionSpec(
                "http-timeout-ms", value: "MS", defaultValue: "10000",
                abstract: "The time a connection has to send its first request (a handshake, or a file's), and an idle HTTP connection may stay open, in milliseconds."),
            OptionSpec(
                "max-connections", value: "N",
                abstract: "Connections open at once; more are answered 503 and closed (default: half the descriptor limit, raised to its hard limit, less 64)."),
            OptionSpec(
                "max-view-models", value: "N", defaultValue: String(limits.maxViewModels),
                abstract: "View-models one session may hold at once; vm.create past it answers -32006."),
            OptionSpec(
                "max-subscriptions", value: "N", defaultValue: String(limits.maxSubscriptions),
                abstract: "Subscriptions one session may hold at once; vm.subscribe past it answers -32006."),
            OptionSpec(
                "max-commands-in-flight", value: "N", defaultValue: String(limits.maxCommandsInFlight),
                abstract: "Commands one session may have running at once; a vm.send starting one more answers -32006."),
            OptionSpec(
                "workers", value: "N",
                abstract: "Worker processes serving the sessions, each on its own host thread (default: \(defaultWorkers); 1 with --clock manual or --test-controls); 0: no worker process, the process started serves every session itself.",
                discussion: "A manual clock and the test controls are one process's, so they take 1 worker only (or 0). With 0 the server is one process, which valgrind and perf see whole."),
            OptionSpec(
                "resume-grace-ms", value: "MS", defaultValue: "30000",
                abstract: "How long a resumable session (a page that connected with ?resume=new) waits for its page after its connection dropped; 0: no session is resumable.",
                discussion: "A page that comes back within it gets the same session: its view-models, subscriptions and every message it missed (protocol/SPEC.md §12, Resume)."),
            OptionSpec(
                "resume-buffer-bytes", value: "BYTES", defaultValue: "1048576",
                abstract: "The output a resumable session keeps for a page that may not have received it; past it, a resume sends the current state instead (a resync)."),
            OptionSpec(
                "max-suspended-sessions", value: "N", defaultValue: "1000",
                abstract: "Sessions waiting for their pages at once in each worker; past it, the one suspended longest is closed."),
            OptionSpec(
                "session-dir", value: "DIR",
                abstract: "Keep each resumable session's screens in DIR, so that its page gets them back after the server restarted (a deploy, a worker replaced).",
                discussion: "DIR is made 0700 when missing and must be private to the user. One file per session (at most 256 KiB), named by a hash of its resume token, rewritten as the session changes, removed when it ends; never a secret input or a token. A page that resumes within --resume-grace-ms of the stop gets its view-models back, with the same handles, values typed and subscriptions (protocol/SPEC.md §12, After a restart). What the app keeps itself (a login) comes back through its own store, which its kinds name when they restore."),
            OptionSpec(
                "static", value: "DIR",
                abstract: staticDirectory == nil
                    ? "The folder served at / (default: none; only /rpc is served)."
                    : "The folder served at / (default: \(staticDirectory!))."),
            OptionSpec(
                "record", value: "DIR",
                abstract: "Record every session to a file of its own in DIR (session-1.jsonl, ...), a transcript that vmhost replays.",
                discussion: "DIR is made when missing. Replay a session with python3 -m vmhost.replay DIR/session-1.jsonl (protocol/conformance/README.md, Recordings)."),
        ] + Server.standardOptions.filter { $0.name != "framing" && $0.name != "record" } + server.configuration.options
            + Server.closingOptions
    }

    var help: HelpText { HelpText(command: command, overview: overview, discussion: discussion, options: options) }

    /// What the transport is told by the command line `parsed` (`arguments` as given: the repeated
    /// options).
    static func transportOptions(
        _ parsed: ParsedArguments, arguments: [String], settings: StandardSettings
    ) throws(UsageError) -> WebSocketTransport.Options {
        var transport = WebSocketTransport.Options()
        (transport.host, transport.port) = try listenAddress(parsed.value("listen") ?? "127.0.0.1:8787")
        transport.allowedOrigins = repeated("allow-origin", in: arguments)
        transport.allowedHosts = repeated("allow-host", in: arguments)
        transport.token = parsed.value("token")
        if transport.token?.isEmpty == true { throw UsageError("--token must not be empty") }
        transport.maxMessageBytes = settings.maxMessageBytes
        transport.httpTimeoutMilliseconds = Int64(try positive("http-timeout-ms", parsed) ?? 10_000)
        transport.maxConnections = try positive("max-connections", parsed)
        var limits = WebSocketTransport.defaultSessionLimits
        limits.maxViewModels = try positive("max-view-models", parsed) ?? limits.maxViewModels
        limits.maxSubscriptions = try positive("max-subscriptions", parsed) ?? limits.maxSubscriptions
        limits.maxCommandsInFlight = try positive("max-commands-in-flight", parsed) ?? limits.maxCommandsInFlight
        transport.sessionLimits = limits
        transport.staticDirectory = parsed.value("static")
        if let grace = try parsed.integer("resume-grace-ms") {
            guard (0...86_400_000).contains(grace) else {
                throw UsageError("--resume-grace-ms must be from 0 to 86400000 (a day), got \(grace)")
            }
            transport.resumeGraceMilliseconds = Int64(grace)
        }
        if let bytes = try parsed.integer("resume-buffer-bytes") {
            guard (1024...(1 << 30)).contains(bytes) else {
                throw UsageError("--resume-buffer-bytes must be from 1024 to 1073741824, got \(bytes)")
            }
            transport.resumeBufferBytes = bytes
        }
        transport.maxSuspendedSessions = try positive("max-suspended-sessions", parsed) ?? transport.maxSuspendedSessions
        transport.sessionDirectory = parsed.value("session-dir")
        return transport
    }

    /// A worker (or the single process): the app (clock, backend) for its sessions, made on its
    /// host thread; each session gets its own kinds from it. Started as /proc/self/exe, a worker
    /// names itself as ps and top show it (`command[N]`). A single process keeps its name.
    private func serve(
        link: WorkerLink, transport: WebSocketTransport.Options, settings: StandardSettings, parsed: ParsedArguments,
        workers: Int
    ) async -> Never {
        var transport = transport
        let command = self.command
        let level = settings.logLevel
        var label = command
        if !link.isSingleProcess {
            label = "\(command)[\(link.index)]"
            Self.nameProcess(label)
        }
        LoggingSystem.bootstrap { [label] _ in StderrLogHandler(logLevel: level, label: label) }
        var logger = Logger(label: label)
        logger.logLevel = level

        var traceFD: Int32?
        if let path = settings.tracePath {
            do throws(TraceRecorder.TraceError) {
                traceFD = try TraceRecorder.open(path: path)
            } catch {
                Self.writeStderr("\(command): \(error)\n")
                exit(2)
            }
        }

        let server = self.server
        let secretMembers = server.configuration.secretMembers
        let appRegion = HostThreadValue(value: link.appRegion)
        let attach = additions.attachSharedRegion
        // Sessions kept for a restart come back within the grace period, or never: the app may
        // then delete what it stored for them.
        let restartGrace: Duration? =
            transport.sessionDirectory != nil && transport.resumeGraceMilliseconds > 0
            ? .milliseconds(transport.resumeGraceMilliseconds) : nil
        let made = await onHostThread { () -> Result<PreparedApp, UsageError> in
            if let region = appRegion.value { attach?(region) }
            do throws(UsageError) {
                return .success(try server.prepareApp(settings: settings, arguments: parsed, logger: logger, restartGrace: restartGrace))
            } catch {
                return .failure(error)
            }
        }
        let app: HostThreadValue<PreparedApp>
        switch made.value {
        case .success(let made): app = HostThreadValue(value: made)
        case .failure(let error): fail(error.message)
        }
        if let traceFD {
            // One trace for every session; the redaction is the same for each (one configuration).
            let trace = await onHostThread {
                TraceRecorder(
                    fd: traceFD,
                    redaction: Host(configuration: app.value.host).redaction(secretMembers: secretMembers),
                    maxBytes: settings.maxTraceBytes)
            }.value
            transport.traceIncoming = { message in trace.record("in", message) }
            transport.traceOutgoing = { body in trace.recordOutgoing(body) }
            transport.beforeExit = { trace.flush(nanoseconds: 200_000_000) }
        }
        let recorded = WebRecording.recordedArguments(
            parsed, configuration: server.configuration, comments: additions.recordingComments?(parsed) ?? [])
        let recording = await onHostThread { () -> WebRecording? in
            settings.recordPath.map {
                WebRecording(
                    command: command, directory: $0, arguments: recorded.arguments, comments: recorded.comments,
                    manualClock: settings.manualClock, secretMembers: secretMembers, maxBytes: settings.maxRecordBytes,
                    budget: settings.recordBudget)
            }
        }
        if let recording = recording.value {
            transport.recordSession = { recording.open() }
            let flushTrace = transport.beforeExit
            transport.beforeExit = {
                flushTrace?()
                recording.cutShort()
            }
        }
        // The server's cap is the supervisor's; a worker keeps its own by its descriptor limit. A
        // single process keeps the cap given, if any.
        if !link.isSingleProcess { transport.maxConnections = nil }
        transport.secretMembers = secretMembers
        do {
            try await WebSocketTransport.run(
                options: transport, logger: logger, worker: link,
                eventLoopThreads: max(1, WorkerPool.coreCount / max(1, workers)),
                // Each connection its own kinds (its own login state) over the app's shared parts.
                makeConfiguration: { recorder in app.value.connectionHost(recorder: recorder) })
        } catch {
            Self.writeStderr("\(command): \(error)\n")
            StderrLogHandler.flush()
            exit(1)
        }
        StderrLogHandler.flush()
        exit(0)
    }

    /// The process started: holds the port, starts the workers, and hands them the connections.
    private func supervise(transport: WebSocketTransport.Options, workers: Int, logLevel: Logger.Level) -> Never {
        LoggingSystem.bootstrap { label in StderrLogHandler(logLevel: logLevel, label: label) }
        let command = self.command
        var logger = Logger(label: command)
        logger.logLevel = logLevel
        let listenHost = transport.host
        let token = transport.token
        Self.warnIfExposed(transport, log: { logger.warning("\($0)") })
        var options = WorkerPool.Options(
            workers: workers, host: listenHost, port: transport.port, maxConnections: transport.maxConnections,
            maxConnectionsPerWorker: WebSocketTransport.connectionsWithinDescriptorLimit(),
            appRegionBytes: additions.sharedRegionBytes)
        options.keepsSessions = transport.sessionDirectory != nil && transport.resumeGraceMilliseconds > 0
        do throws(WorkerError) {
            try WorkerPool.supervise(options: options, logger: logger) { port in
                Self.announce(command: command, listenHost: listenHost, port: port, token: token)
            }
        } catch {
            Self.writeStderr("\(command): \(error)\n")
            StderrLogHandler.flush()
            exit(1)
        }
    }

    /// Says where the server listens (once it serves).
    static func announce(command: String, listenHost: String, port: Int, token: String?) {
        // What the start logged comes first.
        StderrLogHandler.flush()
        let query = token == nil ? "" : "?token=…"
        // An IPv6 address is written in brackets, as in a URL (RFC 3986).
        let host = listenHost.contains(":") ? "[\(listenHost)]" : listenHost
        writeStderr("\(command): serving http://\(host):\(port)/\(query) (WebSocket at /rpc)\n")
    }

    /// Warns of a server listening on every address without a token.
    static func warnIfExposed(_ transport: WebSocketTransport.Options, log: (String) -> Void) {
        guard transport.token == nil, ["0.0.0.0", "::", "0:0:0:0:0:0:0:0"].contains(transport.host) else { return }
        log("listening on every address (\(transport.host)) without --token: anyone who can reach this port can open a session; give --token")
    }

    /// `--workers`: from 0 to ``WorkerPool/maxWorkers``; by default the number of cores (or the
    /// app's default). A manual clock and the test controls are one process's: they take 1 worker
    /// only (or 0, the process started serving alone).
    func workerCount(_ parsed: ParsedArguments) throws(UsageError) -> Int {
        let given = try parsed.integer("workers")
        if let given, !(0...WorkerPool.maxWorkers).contains(given) {
            throw UsageError("--workers must be from 0 to \(WorkerPool.maxWorkers), got \(given)")
        }
        let singleProcess = parsed.value("clock") == "manual" ? "--clock manual" : parsed.flag("test-controls") ? "--test-controls" : nil
        if let singleProcess {
            if let given, given > 1 {
                throw UsageError("--workers \(given): \(singleProcess) acts on one process's clock and backend; it takes --workers 1 (or 0)")
            }
            return given ?? 1
        }
        if let given { return given }
        return additions.defaultWorkers?(parsed) ?? WorkerPool.coreCount
    }

    /// `HOST:PORT`, `[::1]:PORT`.
    static func listenAddress(_ text: String) throws(UsageError) -> (String, Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw UsageError("--listen must be HOST:PORT, e.g. 127.0.0.1:8787, got '\(text)'")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw UsageError("--listen must be HOST:PORT with a port from 0 to 65535, got '\(text)'")
        }
        return (host, port)
    }

    /// Every value of `--name` given, each maybe a comma-separated list (the parser keeps the
    /// last value of an option).
    static func repeated(_ name: String, in arguments: [String]) -> [String] {
        var values: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--\(name)", index + 1 < arguments.count {
                values.append(arguments[index + 1])
                index += 1
            } else if argument.hasPrefix("--\(name)=") {
                values.append(String(argument.dropFirst(name.count + 3)))
            }
            index += 1
        }
        return values.flatMap { $0.split(separator: ",").map(String.init) }.filter { !$0.isEmpty }
    }

    /// The value of `--name`: a whole number of at least 1, or nil when not given.
    static func positive(_ name: String, _ parsed: ParsedArguments) throws(UsageError) -> Int? {
        guard let value = try parsed.integer(name) else { return nil }
        guard value >= 1 else { throw UsageError("--\(name) must be at least 1, got \(value)") }
        return value
    }

    /// Sets the process's name (its first thread's), at most 15 bytes.
    static func nameProcess(_ name: String) {
        let fd = open("/proc/self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        var bytes = Array(name.utf8.prefix(15))
        _ = write(fd, &bytes, bytes.count)
        close(fd)
    }

    static func writeStderr(_ text: String) {
        var bytes = Array(text.utf8)
        _ = write(2, &bytes, bytes.count)
    }

    /// Writes a usage error to stderr with the usage and exits 64 (EX_USAGE).
    func fail(_ message: String) -> Never {
        Self.writeStderr("Error: \(message)\nUsage: \(help.usage)\n  See '\(command) --help' for more information.\n")
        exit(64)
    }
}

/// A value handed from the host thread to another, for values that are used only on the host
/// thread (a configuration holding host-actor closures).
struct HostThreadValue<T>: @unchecked Sendable { let value: T }

/// `body`'s value, made on the host thread.
func onHostThread<T>(_ body: @escaping @HostActor () -> T) async -> HostThreadValue<T> {
    await withCheckedContinuation { continuation in
        EventLoop.shared.execute { continuation.resume(returning: HostThreadValue(value: HostActor.assumeIsolated { body() })) }
    }
}
#endif
