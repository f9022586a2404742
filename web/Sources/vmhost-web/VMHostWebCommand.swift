#if canImport(Glibc)
import Glibc
#endif
import AppComposition
import Logging
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWebSocket

/// The command line: `vmhost-web [options]`: the reference app's kinds served to browsers over
/// WebSocket at `/rpc`, and the web demo at `/`.
@main
enum VMHostWebCommand {
    static let overview = "Serves the app's view-models to browsers: JSON-RPC 2.0 over WebSocket at /rpc, the web demo at /."
    static let discussion = """
        Each WebSocket connection is its own session (its own view-models, subscriptions and
        locale) speaking the protocol of protocol/SPEC.md, one message per text frame. Logs go to
        stderr. The transport is specified in protocol/SPEC.md, "WebSocket transport".

        The sessions are spread over worker processes (--workers), each with its own host thread;
        the process started holds the port and hands each connection to the least busy worker.
        With --workers 0 the process started serves every session itself and starts no other
        (to profile the server: valgrind, perf).

        Example:
          vmhost-web --listen 127.0.0.1:8787   # then open http://127.0.0.1:8787/
        """

    static let options: [OptionSpec] = [
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
            "max-view-models", value: "N", defaultValue: String(WebSocketTransport.defaultSessionLimits.maxViewModels),
            abstract: "View-models one session may hold at once; vm.create past it answers -32006."),
        OptionSpec(
            "max-subscriptions", value: "N", defaultValue: String(WebSocketTransport.defaultSessionLimits.maxSubscriptions),
            abstract: "Subscriptions one session may hold at once; vm.subscribe past it answers -32006."),
        OptionSpec(
            "max-commands-in-flight", value: "N", defaultValue: String(WebSocketTransport.defaultSessionLimits.maxCommandsInFlight),
            abstract: "Commands one session may have running at once; a vm.send starting one more answers -32006."),
        OptionSpec(
            "workers", value: "N",
            abstract: "Worker processes serving the sessions, each on its own host thread (default: the number of cores with an HTTP backend; 1 with the embedded backend, --clock manual or --test-controls); 0: no worker process, the process started serves every session itself.",
            discussion: "The embedded backend's demo data (groups made, renamed, deleted) is each worker's own; a manual clock and the test controls are one process's, so they take 1 worker only (or 0). With 0 the server is one process, which valgrind and perf see whole."),
        OptionSpec(
            "static", value: "DIR",
            abstract: "The folder served at / (default: the checkout's clients folder, found from the working directory or from the executable's path; / then opens the web demo, /web/demo/)."),
        OptionSpec(
            "record", value: "DIR",
            abstract: "Record every session to a file of its own in DIR (session-1.jsonl, ...), a transcript that vmhost replays.",
            discussion: "DIR is made when missing. Replay a session with python3 -m vmhost.replay DIR/session-1.jsonl (protocol/conformance/README.md, Recordings)."),
    ] + Server.standardOptions.filter { $0.name != "framing" && $0.name != "record" } + ReferenceApp.configuration.options
        + Server.closingOptions

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let parsed: ParsedArguments
        let settings: ServerSettings
        let workers: Int
        var transport = WebSocketTransport.Options()
        do throws(UsageError) {
            parsed = try ParsedArguments(arguments, options: options)
            if parsed.flag("help") {
                print(HelpText(command: "vmhost-web", overview: overview, discussion: discussion, options: options).text, terminator: "")
                exit(0)
            }
            if parsed.flag("version") {
                print(vmhostVersion)
                exit(0)
            }
            settings = try ServerSettings(parsed)
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
            if let folder = parsed.value("static") {
                transport.staticDirectory = folder
            } else if let folder = clientsDirectory() {
                transport.staticDirectory = folder
                transport.indexRedirect = "/web/demo/"
            }
            workers = try workerCount(parsed)
        } catch {
            fail(error.message)
        }

        if let directory = settings.recordPath {
            // Made (or refused) before any worker starts; each worker's sessions then take the
            // next free session-N.jsonl of it.
            do throws(SessionRecorder.RecordingError) {
                try SessionRecorder.prepare(directory: directory)
            } catch {
                writeStderr("vmhost-web: \(error)\n")
                exit(2)
            }
        }

        let link: WorkerLink
        do throws(WorkerError) {
            if workers == 0 {
                warnIfExposed(transport, log: { writeStderr("vmhost-web warning: \($0)\n") })
                let listenHost = transport.host, token = transport.token
                link = try WorkerLink.singleProcess(host: transport.host, port: transport.port) { port in
                    announce(listenHost: listenHost, port: port, token: token)
                }
            } else if let worker = try WorkerLink.current(appRegionBytes: WorkerSharedState.regionBytes) {
                link = worker
            } else {
                supervise(transport: transport, workers: workers, logLevel: settings.logLevel)
            }
        } catch {
            writeStderr("vmhost-web: \(error)\n")
            exit(1)
        }

        // A worker: the app (clock, backend) for its sessions, made on its host thread; each
        // session gets its own kinds from it (its own login state). Started as /proc/self/exe, it
        // names itself as ps and top show it. A single process keeps its name.
        let level = settings.logLevel
        var label = "vmhost-web"
        if !link.isSingleProcess {
            label = "vmhost-web[\(link.index)]"
            nameProcess(label)
        }
        LoggingSystem.bootstrap { [label] _ in StderrLogHandler(logLevel: level, label: label) }
        var logger = Logger(label: label)
        logger.logLevel = level

        var traceFD: Int32?
        if let path = settings.tracePath {
            do throws(TraceRecorder.TraceError) {
                traceFD = try TraceRecorder.open(path: path)
            } catch {
                writeStderr("vmhost-web: \(error)\n")
                exit(2)
            }
        }

        let server = Server(ReferenceApp.configuration)
        let appRegion = HostThreadValue(value: link.appRegion)
        let made = await onHostThread { () -> Result<Server.App, UsageError> in
            // What the workers share: the countdowns, the device id.
            if let region = appRegion.value { ReferenceApp.serverWide = WorkerSharedState(region: region) }
            do throws(UsageError) {
                return .success(try server.makeApp(settings: settings, arguments: parsed, logger: logger))
            } catch {
                return .failure(error)
            }
        }
        let app: HostThreadValue<Server.App>
        switch made.value {
        case .success(let made): app = HostThreadValue(value: made)
        case .failure(let error): fail(error.message)
        }
        if let traceFD {
            // One trace for every session; the redaction is the same for each (one configuration).
            let trace = await onHostThread {
                TraceRecorder(
                    fd: traceFD,
                    redaction: Host(configuration: app.value.host).redaction(
                        secretMembers: ReferenceApp.configuration.secretMembers),
                    maxBytes: settings.maxTraceBytes)
            }.value
            transport.traceIncoming = { message in trace.record("in", message) }
            transport.traceOutgoing = { body in trace.recordOutgoing(body) }
            transport.beforeExit = { trace.flush(nanoseconds: 200_000_000) }
        }
        let recorded = WebRecording.recordedArguments(parsed)
        let recording = await onHostThread { () -> WebRecording? in
            settings.recordPath.map {
                WebRecording(
                    directory: $0, arguments: recorded.arguments, comments: recorded.comments, manualClock: settings.manualClock,
                    secretMembers: ReferenceApp.configuration.secretMembers, maxBytes: settings.maxRecordBytes,
                    budget: settings.recordBudget)
            }
        }
        transport.tapSession = { host in recording.value?.tap(host) }
        if let recording = recording.value {
            let flushTrace = transport.beforeExit
            transport.beforeExit = {
                flushTrace?()
                recording.cutShort()
            }
        }
        // The server's cap is the supervisor's; a worker keeps its own by its descriptor limit. A
        // single process keeps the cap given, if any.
        if !link.isSingleProcess { transport.maxConnections = nil }
        do {
            try await WebSocketTransport.run(
                options: transport, logger: logger, worker: link,
                eventLoopThreads: max(1, WorkerPool.coreCount / max(1, workers)),
                // Each connection its own login (and so its own token) over the shared backend client.
                makeConfiguration: {
                    let make = { app.value.connectionHost() }
                    return recording.value?.configuration(make) ?? make()
                })
        } catch {
            writeStderr("vmhost-web: \(error)\n")
            StderrLogHandler.flush()
            exit(1)
        }
        StderrLogHandler.flush()
    }

    /// The process started: holds the port, starts the workers, and hands them the connections.
    static func supervise(transport: WebSocketTransport.Options, workers: Int, logLevel: Logger.Level) -> Never {
        LoggingSystem.bootstrap { label in StderrLogHandler(logLevel: logLevel, label: label) }
        var logger = Logger(label: "vmhost-web")
        logger.logLevel = logLevel
        let listenHost = transport.host
        let token = transport.token
        warnIfExposed(transport, log: { logger.warning("\($0)") })
        let options = WorkerPool.Options(
            workers: workers, host: listenHost, port: transport.port, maxConnections: transport.maxConnections,
            maxConnectionsPerWorker: WebSocketTransport.connectionsWithinDescriptorLimit(),
            appRegionBytes: WorkerSharedState.regionBytes)
        do throws(WorkerError) {
            try WorkerPool.supervise(options: options, logger: logger) { port in
                announce(listenHost: listenHost, port: port, token: token)
            }
        } catch {
            writeStderr("vmhost-web: \(error)\n")
            StderrLogHandler.flush()
            exit(1)
        }
    }

    /// Says where the server listens (once it serves).
    static func announce(listenHost: String, port: Int, token: String?) {
        // What the start logged comes first.
        StderrLogHandler.flush()
        let query = token == nil ? "" : "?token=…"
        // An IPv6 address is written in brackets, as in a URL (RFC 3986).
        let host = listenHost.contains(":") ? "[\(listenHost)]" : listenHost
        writeStderr("vmhost-web: serving http://\(host):\(port)/\(query) (WebSocket at /rpc)\n")
    }

    /// Warns of a server listening on every address without a token.
    static func warnIfExposed(_ transport: WebSocketTransport.Options, log: (String) -> Void) {
        guard transport.token == nil, ["0.0.0.0", "::", "0:0:0:0:0:0:0:0"].contains(transport.host) else { return }
        log("listening on every address (\(transport.host)) without --token: anyone who can reach this port can open a session; give --token")
    }

    /// `--workers`: from 0 to ``WorkerPool/maxWorkers``; by default the number of cores with an
    /// HTTP backend, 1 with the embedded one (its demo data is each process's own). A manual clock
    /// and the test controls are one process's: they take 1 worker only (or 0, the process
    /// started serving alone).
    static func workerCount(_ parsed: ParsedArguments) throws(UsageError) -> Int {
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
        return (parsed.value("backend") ?? "embedded") == "embedded" ? 1 : WorkerPool.coreCount
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

    /// The checkout's `clients` folder (the web demo, the browser client and the protocol module it
    /// shares with the Node client), from the working directory or from the checkout the executable
    /// was built in (`<checkout>/web/.build/<configuration>/vmhost-web`, or a build folder of the
    /// checkout's own, `<checkout>/.build-release/release/vmhost-web`).
    static func clientsDirectory() -> String? {
        var candidates = ["clients", "../clients"]
        if let executable = CommandLine.arguments.first, let slash = executable.lastIndex(of: "/") {
            let folder = String(executable[..<slash])
            candidates += [folder + "/../../../clients", folder + "/../../clients"]
        }
        return candidates.first { access($0 + "/web/demo/index.html", R_OK) == 0 }
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

    static func fail(_ message: String) -> Never {
        let usage = HelpText(command: "vmhost-web", overview: overview, discussion: discussion, options: options).usage
        writeStderr("Error: \(message)\nUsage: \(usage)\n  See 'vmhost-web --help' for more information.\n")
        exit(64)
    }
}

/// A value handed from the host thread to another, for values that are used only on the host
/// thread (a configuration holding host-actor closures).
struct HostThreadValue<T>: @unchecked Sendable { let value: T }

func onHostThread<T>(_ body: @escaping @HostActor () -> T) async -> HostThreadValue<T> {
    await withCheckedContinuation { continuation in
        EventLoop.shared.execute { continuation.resume(returning: HostThreadValue(value: HostActor.assumeIsolated { body() })) }
    }
}
