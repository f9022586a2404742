#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostHTTP
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// An app's view-models served over JSON-RPC 2.0 on stdin/stdout: the whole of an app's `main`.
///
/// ```swift
/// import VMHost
///
/// Server(name: "todo", version: "1.0.0") { environment in
///     let store = TodoStore(clock: environment.clock)
///     return ServedApp(kinds: [TodoListViewModel.factory(store: store)])
/// }.run()
/// ```
///
/// The server owns the process: it reads the command line (the ``standardOptions`` and the app's
/// own, `--help`, `--version`), sets up stdio (framing, a protocol stream of its own so that a stray
/// `print` lands in the logs), the trace, the logs on stderr, signals, EOF and a closed stdout.
/// What is the app's to choose is in ``ServerConfiguration``. The behaviour of the process is
/// specified in protocol/SPEC.md §7 (lifecycle) and §8 (trace and logs).
public struct Server: Sendable {
    /// What this server serves and how it is named.
    public let configuration: ServerConfiguration

    /// A server of `configuration`.
    public init(_ configuration: ServerConfiguration) {
        self.configuration = configuration
    }

    /// A server named `name` (`serverInfo.name`, and the command in `--help`) at `version`, serving
    /// the kinds `kinds` makes; the other settings keep their defaults (see ``ServerConfiguration``).
    public init(
        name: String, version: String, options: [OptionSpec] = [],
        kinds: @escaping @HostActor @Sendable (ServerEnvironment) throws(UsageError) -> ServedApp
    ) {
        self.init(ServerConfiguration(name: name, version: version, options: options, kinds: kinds))
    }

    /// Reads the process's command line and serves until the end of input (once the commands read
    /// are done), a signal, `exit` or a closed stdout; never returns. A usage error is written to
    /// stderr with the usage and exits 64.
    public func run() -> Never {
        run(arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// Like ``run()``, with the command line `arguments` (without the program's name).
    package func run(arguments: [String]) -> Never {
        let options = allOptions
        let parsed: ParsedArguments
        do throws(UsageError) {
            parsed = try ParsedArguments(arguments, options: options)
        } catch {
            fail(error.message)
        }
        if parsed.flag("help") {
            print(help.text, terminator: "")
            exit(0)
        }
        if parsed.flag("version") {
            print("\(configuration.name) \(configuration.version)")
            exit(0)
        }
        let settings: ServerSettings
        do throws(UsageError) {
            settings = try ServerSettings(parsed)
        } catch {
            fail(error.message)
        }
        StdioServer.run(self, settings: settings, arguments: parsed)
    }

    /// The options every server has, in the order `--help` lists them (the app's own options are
    /// listed after them, then `--version` and `--help`).
    @_spi(Transport)
    public static let standardOptions: [OptionSpec] = [
        OptionSpec(
            "framing", value: "auto|ndjson|lsp", choices: Framing.allCases.map(\.rawValue), defaultValue: "auto",
            abstract: "Message framing: auto, ndjson or lsp.",
            discussion: "ndjson is one JSON text per line. lsp is 'Content-Length: N' headers. auto skips a byte order mark, reads a first header line ('Name: value') as lsp and anything else as ndjson, and answers in the same framing."),
        OptionSpec(
            "clock", value: "system|manual", choices: ["system", "manual"], defaultValue: "system",
            abstract: "The host's clock: 'system' (real time) or 'manual'.",
            discussion: "A manual clock moves only with control.clock.advance (needs --test-controls): timers, countdowns, backend latency and timeouts become deterministic."),
        OptionSpec(
            "test-controls",
            abstract: "Serve the control.* methods (the clock, and the app's own test controls). Without it they answer -32601."),
        OptionSpec(
            "trace", value: "FILE",
            abstract: "Append every message in and out to FILE as NDJSON {t, dir, msg}.",
            discussion: "The values of inputs declared secret (passwords, SMS codes) and secret members such as tokens are written as \"***\" (protocol/SPEC.md §8). A FIFO must have a reader when the host starts."),
        OptionSpec(
            "record", value: "FILE",
            abstract: "Write the session to FILE as a conformance transcript that a replay repeats.",
            discussion: "Every message sent and written, and every exchange of the app's HTTP clients, secrets as placeholders a replay fills (protocol/conformance/README.md, Recordings). Replay it with python3 -m vmhost.replay FILE."),
        OptionSpec(
            "http-replay", value: "FILE",
            abstract: "Answer every call of the app's HTTP clients from the recording FILE, with no server.",
            discussion: "FILE is a recording of --record: its {\"http\": ...} lines. A call takes the first recorded exchange not used yet of the same method, path, query, header fields and body (a masked secret stands for any value); a call with none fails, naming its method and path (protocol/backend.md, Recorded HTTP)."),
        OptionSpec(
            "http-replay-ignore", value: "LIST",
            abstract: "What --http-replay leaves out when it matches a call: header:NAME, query:NAME, body:NAME, comma-separated.",
            discussion: "For values that change from run to run: a request id header, a timestamp parameter, a body member (at any depth)."),
        OptionSpec(
            "max-record-bytes", value: "BYTES", defaultValue: String(SessionRecorder.defaultMaxBytes),
            abstract: "Largest recording of one session (--record), in bytes.",
            discussion: "Past it the recording ends with a comment saying why, and the session goes on."),
        OptionSpec(
            "max-record-total-bytes", value: "BYTES", defaultValue: String(RecordingBudget.defaultLimit),
            abstract: "Most bytes all the recordings of this server write together (--record), in bytes.",
            discussion: "Past it each recording ends with a comment saying why, and its session goes on."),
        OptionSpec(
            "max-trace-bytes", value: "BYTES", defaultValue: String(TraceRecorder.defaultMaxBytes),
            abstract: "Most bytes this server appends to its trace (--trace), in bytes.",
            discussion: "Past it a last line {\"dir\": \"end\"} says why, and nothing more is written."),
        OptionSpec(
            "log-level", value: "LEVEL", choices: Logger.Level.allCases.map(\.rawValue), defaultValue: "warning",
            abstract: "Least severe log level written to stderr: trace, debug, info, notice, warning, error or critical."),
        OptionSpec(
            "max-message-bytes", value: "BYTES", defaultValue: String(ServerSettings.defaultMaxMessageBytes),
            abstract: "Largest message accepted, in bytes. A larger one is skipped and answered with an error; the host keeps serving."),
    ]

    /// `--version` and `--help`, which close every listing of options.
    @_spi(Transport)
    public static let closingOptions: [OptionSpec] = [
        OptionSpec("version", abstract: "Show the version."),
        OptionSpec("help", short: "h", abstract: "Show help information."),
    ]

    /// The standard options, the app's, `--version` and `--help`.
    var allOptions: [OptionSpec] { Self.standardOptions + configuration.options + Self.closingOptions }

    var help: HelpText {
        HelpText(
            command: configuration.name, overview: configuration.overview, discussion: configuration.discussion,
            options: allOptions)
    }

    /// Writes a usage error to stderr and exits 64 (EX_USAGE).
    func fail(_ message: String) -> Never {
        ProcessOutput.stderr(
            "Error: \(message)\nUsage: \(help.usage)\n  See '\(configuration.name) --help' for more information.\n")
        exit(64)
    }
}

/// What an app chooses about its server. Everything else (stdio, framing, signals, trace, logs, the
/// standard options) is the server's.
public struct ServerConfiguration: Sendable {
    /// The server's name: `serverInfo.name` in `initialize`, the command in `--help` and the prefix
    /// of log lines.
    public var name: String
    /// The app's version: `serverInfo.version` and `--version`.
    public var version: String
    /// One sentence for `--help`: what the server is.
    public var overview: String
    /// A paragraph or two for `--help`, after the overview.
    public var discussion: String
    /// The app's own command-line options, listed by `--help` after the standard ones; their values
    /// reach ``kinds`` as ``ServerEnvironment/arguments``.
    public var options: [OptionSpec]
    /// The locale of display strings until a client's `initialize {locale}` chooses another
    /// (English unless the app says otherwise).
    public var defaultLocale: AppLocale
    /// The locales `initialize {locale}` accepts (the rule: ``AppLocale/match(_:in:)``); another
    /// is -32602.
    public var locales: [AppLocale]
    /// The kinds of domain error the app's commands fail with (``DomainFailure``): the `kind`
    /// enumeration of every error schema in `host.describe`. Nil: any string.
    public var errorKinds: [String]?
    /// Names of members whose string values are secret wherever they appear (a `token` in a
    /// message), masked in the trace like the values of inputs declared secret. The names of the
    /// secret inputs themselves need not be listed.
    public var secretMembers: Set<String>
    /// Names of header fields whose values are secret in a recording of the app's HTTP exchanges
    /// (`--record`), besides the JSON members of ``secretMembers`` and the credential-like ones
    /// (``HTTPSecrets``). By default `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`.
    public var secretHeaders: Set<String> = HTTPSecrets.defaultHeaders
    /// Makes the app's kinds and test controls once the server has read its command line (on the
    /// host thread, before the first message). A usage error (an app option's bad value) is
    /// written with the usage, and the process exits 64.
    public var kinds: @HostActor @Sendable (ServerEnvironment) throws(UsageError) -> ServedApp

    /// A configuration; `overview` and `discussion` default to a description of a vmhost server.
    public init(
        name: String, version: String,
        overview: String? = nil, discussion: String? = nil,
        options: [OptionSpec] = [],
        defaultLocale: AppLocale = .en, locales: [AppLocale]? = nil,
        errorKinds: [String]? = nil,
        secretMembers: Set<String> = [],
        secretHeaders: Set<String> = HTTPSecrets.defaultHeaders,
        kinds: @escaping @HostActor @Sendable (ServerEnvironment) throws(UsageError) -> ServedApp
    ) {
        self.name = name
        self.version = version
        self.overview = overview ?? "Holds \(name)'s view-models and serves them over JSON-RPC 2.0 on stdin/stdout."
        self.discussion = discussion ?? """
            Requests are read from stdin, responses and notifications are written to stdout, logs go
            to stderr. Start it, send {"jsonrpc":"2.0","id":1,"method":"host.describe"} and read the
            catalog of view-model kinds.
            """
        self.options = options
        self.defaultLocale = defaultLocale
        self.locales = locales ?? [defaultLocale]
        self.errorKinds = errorKinds
        self.secretMembers = secretMembers
        self.secretHeaders = secretHeaders
        self.kinds = kinds
    }
}

/// What the server decided before the app's kinds are made: given to ``ServerConfiguration/kinds``.
public struct ServerEnvironment: Sendable {
    /// The host's clock, chosen by `--clock`: a ``SystemClock`` or a ``ManualClock`` (moved by
    /// `control.clock.advance`). Every timer, latency and deadline of the app goes through it.
    public let clock: any HostClock
    /// The command line, for the app's own options (``ServerConfiguration/options``).
    public let arguments: ParsedArguments
    /// The locale until a client chooses one (``ServerConfiguration/defaultLocale``).
    public let locale: AppLocale
    /// Whether `--test-controls` was given (the app's ``ServedApp/controls`` are served only then).
    public let testControls: Bool
    /// The server's logger (stderr, at `--log-level`).
    public let logger: Logger
}

/// What an app serves: its kinds, and the test controls that drive its fakes.
@HostActor
public struct ServedApp {
    /// Every kind `vm.create` can make, in `host.describe` order.
    public var kinds: [ViewModelFactory]
    /// Methods served only with `--test-controls` (beside `control.clock.advance`).
    public var controls: [TestControl]
    /// A few words for the start-up log line (`backend embedded`), if any.
    public var summary: String?
    /// For a transport that serves many connections in one process (WebSocket): makes the kinds of
    /// one connection, so that each has its own state (a login) over what the app shares (its
    /// backend client). Nil: every connection is served ``kinds``. The stdio server never calls it.
    public var connectionKinds: (@HostActor () -> [ViewModelFactory])?

    /// An app of `kinds`, with `controls` for tests.
    public init(
        kinds: [ViewModelFactory], controls: [TestControl] = [], summary: String? = nil,
        connectionKinds: (@HostActor () -> [ViewModelFactory])? = nil
    ) {
        self.kinds = kinds
        self.controls = controls
        self.summary = summary
        self.connectionKinds = connectionKinds
    }
}

/// A test-control method (`control.backend.latency`): served only with `--test-controls`, named
/// `control.*` by convention, and listed in the app's protocol documents.
@HostActor
public struct TestControl {
    /// The method's name.
    package let name: String
    /// Answers one call (synchronously or later).
    package let handler: RPCEngine.Handler

    /// A control answering calls with `handler`.
    package init(_ name: String, handler: @escaping RPCEngine.Handler) {
        self.name = name
        self.handler = handler
    }

    /// A control answered at once: `{}` once `body` accepted the params (`{}` when absent), or the
    /// error `body` throws (-32602 naming the param, for instance). Its params follow the rule of
    /// every method (SPEC §2): an object with no member outside `members`, else -32602.
    public init(_ name: String, params members: Set<String>, _ body: @escaping @HostActor (JSON) throws(RPCError) -> Void) {
        self.init(name) { call in
            do throws(RPCError) {
                _ = try call.params(allowing: members)
                try body(call.params ?? [:])
                call.succeed([:])
            } catch {
                call.fail(error)
            }
        }
    }
}

/// The standard options of a run, validated (for another transport, such as WebSocket, too).
@_spi(Transport)
public struct ServerSettings: Sendable {
    static let defaultMaxMessageBytes = 4 * 1024 * 1024
    /// The most input bytes a host holds read and not handled yet, on every transport: stdio reads
    /// ahead no further, and an embedded host's writer waits (or, on the host thread, is refused)
    /// past it (protocol/SPEC.md §10). A single write larger than it is taken once nothing waits.
    package static let maxQueuedInputBytes = 8 << 20

    /// `--framing`.
    @_spi(Transport) public var framing: Framing
    /// `--clock manual`.
    @_spi(Transport) public var manualClock: Bool
    /// `--test-controls`.
    @_spi(Transport) public var testControls: Bool
    /// `--trace FILE`.
    public var tracePath: String?
    /// `--record`: the recording's file (a folder of them for a transport of many sessions).
    public var recordPath: String?
    /// `--log-level`.
    public var logLevel: Logger.Level
    /// `--max-message-bytes`.
    public var maxMessageBytes: Int
    /// `--max-record-bytes`: the bound of one session's recording.
    public var maxRecordBytes: Int
    /// `--max-record-total-bytes`: the budget of all the recordings of this server.
    public var recordBudget: RecordingBudget
    /// `--max-trace-bytes`.
    public var maxTraceBytes: Int
    /// `--http-replay FILE`: the recording the app's HTTP clients answer from.
    public var httpReplayPath: String?
    /// `--http-replay-ignore`.
    public var httpReplayIgnoring: HTTPReplayIgnoring

    /// The standard options of `parsed`; a bad value is a usage error.
    public init(_ parsed: ParsedArguments) throws(UsageError) {
        framing = Framing(rawValue: parsed.value("framing") ?? "auto")!
        manualClock = parsed.value("clock") == "manual"
        testControls = parsed.flag("test-controls")
        tracePath = parsed.value("trace")
        recordPath = parsed.value("record")
        logLevel = Logger.Level(rawValue: parsed.value("log-level") ?? "warning")!
        maxMessageBytes = try parsed.integer("max-message-bytes") ?? Self.defaultMaxMessageBytes
        guard maxMessageBytes >= 64 else {
            throw UsageError("--max-message-bytes must be at least 64, got \(maxMessageBytes)")
        }
        maxRecordBytes = try Self.bound("max-record-bytes", parsed, default: SessionRecorder.defaultMaxBytes)
        let total = try Self.bound("max-record-total-bytes", parsed, default: RecordingBudget.defaultLimit)
        recordBudget = total == RecordingBudget.defaultLimit ? .shared : RecordingBudget(limit: total)
        maxTraceBytes = try Self.bound("max-trace-bytes", parsed, default: TraceRecorder.defaultMaxBytes)
        httpReplayPath = parsed.value("http-replay")
        if httpReplayPath?.isEmpty == true { throw UsageError("--http-replay: the file is missing") }
        do throws(HTTPReplayError) {
            httpReplayIgnoring = try HTTPReplayIgnoring(list: parsed.value("http-replay-ignore") ?? "")
        } catch {
            throw UsageError("--http-replay-ignore: \(error.message)")
        }
        if parsed.value("http-replay-ignore") != nil, httpReplayPath == nil {
            throw UsageError("--http-replay-ignore applies to --http-replay only")
        }
    }

    /// The value of a bound in bytes (`--name`), at least 1024.
    private static func bound(_ name: String, _ parsed: ParsedArguments, default value: Int) throws(UsageError) -> Int {
        let given = try parsed.integer(name) ?? value
        guard given >= 1024 else { throw UsageError("--\(name) must be at least 1024 bytes, got \(given)") }
        return given
    }
}

extension Server {
    /// The app made for a run.
    @_spi(Transport)
    @HostActor
    public struct App {
        /// The configuration of its ``Host``.
        public var host: Host.Configuration
        /// The framing its input is read in (`--framing`).
        package var framing: Framing = .auto
        /// The largest message it accepts (`--max-message-bytes`).
        package var maxMessageBytes = ServerSettings.defaultMaxMessageBytes
        /// The app's summary for the start-up log line.
        package var summary: String?
        /// ``ServedApp/connectionKinds``.
        package var connectionKinds: (@HostActor () -> [ViewModelFactory])?
        /// What the app's HTTP clients are carried by (`--record`, `--http-replay`): set while
        /// its kinds are made; a transport of one session (stdio) keeps it set for the run.
        package var httpTransport: (@HostActor (any HTTPTransport) -> any HTTPTransport)?
        /// `--http-replay`'s answers, shared by every connection.
        var httpReplay: HTTPReplay?
        /// The secrets of a recording of the app's HTTP exchanges.
        var httpSecrets = HTTPSecrets()

        /// The configuration of one connection's host, for a transport that serves many: the
        /// clock and the app's shared parts are the same for all, the kinds are the connection's
        /// own when the app makes them per connection (their HTTP clients then answer from
        /// `--http-replay`, and are recorded in the connection's recording, if any:
        /// ``SessionRecorder/current`` while this runs).
        public func connectionHost() -> Host.Configuration {
            guard let connectionKinds else { return host }
            var configuration = host
            let previous = HTTPSessionTransport.current
            HTTPSessionTransport.current = Server.httpSessionTransport(
                replay: httpReplay, recorder: SessionRecorder.current, secrets: httpSecrets)
            defer { HTTPSessionTransport.current = previous }
            configuration.factories = connectionKinds()
            return configuration
        }
    }

    /// The app `arguments` (a command line without the program's name) make, as ``run(arguments:)``
    /// would serve it, without serving it: for a test of the app's whole wiring in process. Logs
    /// go nowhere.
    @HostActor
    package func makeApp(arguments: [String]) throws(UsageError) -> App {
        let parsed = try ParsedArguments(arguments, options: allOptions)
        let settings = try ServerSettings(parsed)
        var app = try makeApp(settings: settings, arguments: parsed, logger: Logger(label: configuration.name) { _ in SwiftLogNoOpLogHandler() })
        app.framing = settings.framing
        app.maxMessageBytes = settings.maxMessageBytes
        return app
    }

    /// The app made for a run: the configuration of its ``Host`` (a transport that serves many
    /// connections makes one host per connection with ``App/connectionHost()``, sharing the clock
    /// and the app's backend), and the app's summary for the start-up log line. Throws the app's
    /// usage errors.
    @_spi(Transport)
    @HostActor
    public func makeApp(
        settings: ServerSettings, arguments: ParsedArguments, logger: Logger
    ) throws(UsageError) -> App {
        let clock: any HostClock = settings.manualClock ? ManualClock() : SystemClock()
        let environment = ServerEnvironment(
            clock: clock, arguments: arguments, locale: configuration.defaultLocale,
            testControls: settings.testControls, logger: logger)
        let httpReplay = try Self.httpReplay(settings: settings)
        let httpSecrets = HTTPSecrets(headers: configuration.secretHeaders, members: configuration.secretMembers)
        let httpTransport = Self.httpSessionTransport(replay: httpReplay, recorder: SessionRecorder.current, secrets: httpSecrets)
        let previous = HTTPSessionTransport.current
        if let httpTransport { HTTPSessionTransport.current = httpTransport }
        defer { HTTPSessionTransport.current = previous }
        let app = try configuration.kinds(environment)
        let host = Host.Configuration(
            clock: clock, factories: app.kinds, testControls: settings.testControls,
            controlMethods: app.controls.map { ($0.name, $0.handler) },
            serverName: configuration.name, serverVersion: configuration.version,
            defaultLocale: configuration.defaultLocale, locales: configuration.locales,
            errorKinds: configuration.errorKinds)
        return App(
            host: host, summary: app.summary, connectionKinds: app.connectionKinds, httpTransport: httpTransport,
            httpReplay: httpReplay, httpSecrets: httpSecrets)
    }

    /// The answers of `--http-replay FILE`, read at start; a FILE that cannot be used is a usage error.
    @HostActor
    static func httpReplay(settings: ServerSettings) throws(UsageError) -> HTTPReplay? {
        guard let path = settings.httpReplayPath else { return nil }
        do throws(HTTPReplayError) {
            return try HTTPReplay(path: path, ignoring: settings.httpReplayIgnoring)
        } catch {
            throw UsageError("--http-replay \(path): \(error.message)")
        }
    }

    /// What carries the app's HTTP calls in a session: `replay` (`--http-replay`) instead of the
    /// server, and `recorder` (the session's recording) keeping each exchange as a `{"http": …}`
    /// line (protocol/backend.md, "Recorded HTTP"), `secrets` masked. Nil: each client's own. A
    /// recording's `offlineArgs` are its `args` with `--http-replay $transcript`, unless the app
    /// names others while its kinds are made.
    @HostActor
    static func httpSessionTransport(
        replay: HTTPReplay?, recorder: SessionRecorder?, secrets: HTTPSecrets
    ) -> (@HostActor (any HTTPTransport) -> any HTTPTransport)? {
        var recording: HTTPExchangeRecording?
        if let recorder {
            // Set before the kinds are made: an app that replays its backend its own way names its
            // own options then.
            recorder.setOfflineArguments(
                SessionRecorder.removing(option: "http-replay", from: recorder.arguments) + ["--http-replay", "$transcript"])
            let made = HTTPExchangeRecording(
                secrets: secrets,
                placeholder: { value, name in recorder.secretPlaceholder(for: value, name: name) },
                write: { line in recorder.record("http", line) })
            recorder.onEnd { made.recordUnfinished() }
            recording = made
        }
        guard replay != nil || recording != nil else { return nil }
        return { @HostActor base in
            var carrier = base
            if let replay { carrier = replay }
            if let recording { carrier = recording.transport(around: carrier) }
            return carrier
        }
    }
}
