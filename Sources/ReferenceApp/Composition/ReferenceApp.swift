import Backend
import HTTPBackend
import Login
import MenuGroups
import ProductList
import StateStore
import VMHost
// The framework's version, which is the reference app's too.
@_spi(Transport) internal import VMHostCore

/// The reference app as a server: its name and version, its own command-line options (the
/// backend), its kinds and the embedded backend's test controls. Served on stdio by `vmhost` and
/// over WebSocket by `vmhost-web`.
public enum ReferenceApp {
    /// `serverInfo.version` and `--version`.
    static let version = vmhostVersion

    public static let configuration = ServerConfiguration(
        name: "vmhost", version: version,
        overview: "Holds an app's view-models and serves them over JSON-RPC 2.0 on stdin/stdout.",
        discussion: """
            Requests are read from stdin, responses and notifications are written to stdout, logs go
            to stderr. Start it, send {"jsonrpc":"2.0","id":1,"method":"host.describe"} and read the
            catalog of view-model kinds. The protocol is specified in protocol/SPEC.md.

            Example:
              printf '%s\\n' '{"jsonrpc":"2.0","id":1,"method":"ping"}' | vmhost
            """,
        options: options,
        // Simplified Chinese unless a client asks for English (its strings: LocalizedText).
        defaultLocale: .zhHans, locales: AppLocale.referenceApp,
        errorKinds: BackendError.kindNames,
        // The session token is no input, yet a secret wherever a message carries it.
        secretMembers: ["token"],
        kinds: { (environment) throws(UsageError) in try served(environment) })

    /// The backend's options, listed by `--help` after the standard ones.
    static let options: [OptionSpec] = [
        OptionSpec(
            "backend", value: "embedded|URL", defaultValue: "embedded",
            abstract: "The backend: 'embedded' (deterministic demo data, in-process) or the base URL of an HTTP server.",
            discussion: "For example --backend http://127.0.0.1:8080. The HTTP contract is in protocol/backend.md."),
        OptionSpec(
            "demo-products", value: "N",
            abstract: "The number of products the embedded backend serves (default: 57, from 0 to 1000000).",
            discussion: "57 is the documented demo catalogue (p001 ... p057). A larger catalogue continues it by the same rule (p058, p059, ...), e.g. --demo-products 5000 for a long list. Only with the embedded backend."),
        OptionSpec(
            "timeout-ms", value: "MS", defaultValue: "15000",
            abstract: "Deadline of every backend call, in milliseconds, on the host's clock."),
        OptionSpec(
            "max-response-bytes", value: "BYTES", defaultValue: String(HTTPAPIClient.defaultMaxResponseBytes),
            abstract: "Largest backend response body read, in bytes (HTTP backend). A larger one fails the call as a decode error without being read further."),
        OptionSpec(
            "state-dir", value: "DIR",
            abstract: "Keep the session, the device id, the last good lists and the SMS countdowns in DIR between runs.",
            discussion: "DIR is created (mode 0700) when missing; the database DIR/state.sqlite3 is mode 0600. A directory others may write, a link, or a file vmhost did not make is refused and left as it is; a damaged database is set aside. Several hosts may share DIR. Without it nothing is written anywhere. See protocol/viewmodels/Session.md and protocol/cli.md."),
    ]

    /// The backend the options choose, the kinds over it, and the embedded backend's test controls.
    @HostActor
    static func served(_ environment: ServerEnvironment) throws(UsageError) -> ServedApp {
        let arguments = environment.arguments
        let text = arguments.value("backend") ?? "embedded"
        let timeoutMs = try arguments.integer("timeout-ms") ?? 15000
        guard timeoutMs > 0 else {
            throw UsageError("--timeout-ms must be a positive number of milliseconds, got \(timeoutMs)")
        }
        let recorded = try recordedBackend(
            text, arguments: arguments, clock: environment.clock, timeout: .milliseconds(timeoutMs))
        let backend: BackendOption
        do throws(BackendOptionError) {
            // A recorded backend stands in for the embedded one below (no HTTP device id).
            backend = recorded == nil ? try BackendOption(parsing: text) : .embedded
        } catch {
            throw UsageError(error.message)
        }
        let maxResponseBytes = try arguments.integer("max-response-bytes") ?? HTTPAPIClient.defaultMaxResponseBytes
        guard maxResponseBytes > 0 else {
            throw UsageError("--max-response-bytes must be a positive number of bytes, got \(maxResponseBytes)")
        }
        let demoProducts = try arguments.integer("demo-products")
        if let demoProducts {
            let range = DemoCatalog.productCountRange
            guard range.contains(demoProducts) else {
                throw UsageError(
                    "--demo-products must be a number of products from \(range.lowerBound) to \(range.upperBound), got \(demoProducts)")
            }
            guard backend == .embedded else {
                throw UsageError("--demo-products applies to the embedded backend only, not to --backend \(text)")
            }
        }
        var storage: StoredState?
        if let directory = arguments.value("state-dir") {
            do throws(StateStoreError) {
                storage = try StoredState.open(directory: directory, logger: environment.logger, clock: environment.clock)
            } catch {
                throw UsageError(error.message)
            }
        }
        let session = AppSession(storage: storage)
        let serverWide = Self.serverWide
        // The device id is the state directory's when there is one (made there on first use), else
        // the server's when this process is one of several serving together.
        var deviceID: String?
        if case .http = backend { deviceID = storage?.deviceID() ?? serverWide?.deviceID(orMake: DeviceID.random) }
        let transport = recorded ?? backend.makeClient(
            clock: environment.clock, timeout: .milliseconds(timeoutMs),
            demoProductCount: demoProducts ?? DemoCatalog.productCount, maxResponseBytes: maxResponseBytes,
            deviceID: deviceID)
        let api = AuthenticatedAPI(
            recording(transport, clock: environment.clock, into: environment.recorder), session: session)
        let lists = storage.map { SessionLists(state: $0, session: session, holder: $0) }
        // The sessions of the connections (WebSocket): each its own login, none stored; what a
        // login saves in the state directory is its own (``ConnectionLogin``).
        let connectionSessions = ConnectionSessions(state: storage, restartGrace: environment.restartGrace)
        var controls: [TestControl] = []
        if let embedded = transport as? EmbeddedBackend {
            controls = [
                control("control.backend.script", params: ["endpoint", "outcomes"]) { (params) throws(ScriptError) in try embedded.script(params: params) },
                control("control.backend.latency", params: ["ms"]) { (params) throws(ScriptError) in try embedded.setLatency(params: params) },
                control("control.backend.reset", params: []) { _ in
                    embedded.reset()
                    session.end(.logout)
                    connectionSessions.endAll(.logout)
                },
            ]
        } else if recorded != nil {
            controls = recordedControls(clock: environment.clock, session: session, connectionSessions: connectionSessions)
        }
        // One cooldown per phone for the process (and, with a state directory, across runs; with
        // processes serving together, across them): another connection does not allow a resend.
        let cooldown =
            storage == nil && serverWide == nil
            ? SMSCodeCooldown()
            : SMSCodeCooldown(storage: storage, shared: serverWide.map(ServerWideCooldowns.init), clock: environment.clock)
        return ServedApp(
            kinds: kinds(api: api, session: session, lists: lists, cooldown: cooldown), controls: controls,
            summary: "backend \(text)",
            connectionKinds: { recorder in
                let (own, ownLists) = connectionSessions.make()
                let base = recording(transport, clock: environment.clock, into: recorder)
                return kinds(
                    api: AuthenticatedAPI(base, session: own), session: own, lists: ownLists, cooldown: cooldown)
            })
    }

    /// What this process shares with the others that serve the app together with it (the workers
    /// of one `vmhost-web`), set before its app is made; nil when it serves alone.
    @HostActor public static var serverWide: (any ServerWideState)?
    /// The most phones whose countdowns are kept at once (``ServerWideState`` may keep no more).
    public static let countdownPhones = SMSCodeCooldown.maxPhones

    /// Every view-model kind the host serves, in `host.describe` order. One line per kind. `lists`
    /// keeps the last good lists of `session`'s login between runs (nil: nothing is kept);
    /// `cooldown` is the SMS countdowns shared by every `Login`.
    @HostActor
    static func kinds(
        api: any APIClient, session: AppSession, lists: (any ListCache)? = nil, cooldown: SMSCodeCooldown = SMSCodeCooldown()
    ) -> [ViewModelFactory] {
        [
            ProductListViewModel.factory(api: api, cache: lists),
            LoginViewModel.factory(api: api, cooldown: cooldown),
            MenuSubGroupViewModel.factory(api: api, cache: lists),
            MenuEditGroupViewModel.factory(api: api),
            SessionViewModel.factory(session: session),
        ]
    }

    /// A control answered `{}` once `body` accepted its params, or -32602 naming the param.
    @HostActor
    static func control(
        _ name: String, params members: Set<String>, _ body: @escaping @HostActor (JSON) throws(ScriptError) -> Void
    ) -> TestControl {
        TestControl(name, params: members) { (params) throws(RPCError) in
            do throws(ScriptError) {
                try body(params)
            } catch {
                throw .invalidParams("params.\(error.message)")
            }
        }
    }
}

/// What the processes serving the app together share besides the state directory: the SMS
/// countdowns per phone (each phone's deadline in wall-clock time, written at every send and read
/// at every check) and, for an HTTP backend without a state directory, the device id.
@HostActor
public protocol ServerWideState: AnyObject {
    /// The countdown deadline kept for `phone`, if any (it may have passed).
    func deadline(of phone: String) -> Duration?
    /// Keeps `deadline` for `phone`, unless a later one is kept already. An implementation keeps
    /// at most ``ReferenceApp/countdownPhones`` phones (a send beyond forgets the earliest), and may
    /// keep none for a phone too long to be valid: it never holds a send back for less than one
    /// process alone would.
    func keep(_ deadline: Duration, for phone: String)
    /// The device id of the server: the first one made by any of the processes, which `make` makes.
    func deviceID(orMake make: () -> String) -> String
}

/// A ``ServerWideState``'s countdowns, as the `Login` kind takes them.
@HostActor
final class ServerWideCooldowns: SharedCooldowns {
    private let state: any ServerWideState

    init(_ state: any ServerWideState) { self.state = state }

    func deadline(of phone: String) -> Duration? { state.deadline(of: phone) }
    func keep(_ deadline: Duration, for phone: String) { state.keep(deadline, for: phone) }
}

/// The login sessions of the connections of a process that serves many (`vmhost-web`): one per
/// connection, its login its own (stored under its random id, ``ConnectionLogin``; the state
/// directory's session is the stdio host's),
/// held weakly so that a closed connection's session goes with it.
@HostActor
final class ConnectionSessions {
    private final class Weak {
        weak var session: AppSession?
        init(_ session: AppSession) { self.session = session }
    }
    private var sessions: [Weak] = []
    private let state: StoredState?
    /// Whether the server keeps sessions for its restart (their logins are then stored).
    private let keepsSessions: Bool

    /// The sessions of `state`'s connections; `restartGrace`: how long a session kept for a
    /// restart may come back (``ServerEnvironment/restartGrace``): the logins kept longer ago are
    /// deleted now.
    init(state: StoredState?, restartGrace: Duration?) {
        self.state = state
        keepsSessions = restartGrace != nil
        if let state, let restartGrace { ConnectionLogin.sweepKept(in: state, grace: restartGrace) }
    }

    /// A new, logged-out session, and the lists its logins save (nil without a state directory).
    func make() -> (AppSession, (any ListCache)?) {
        sessions.removeAll { $0.session == nil }
        let login = state.map { ConnectionLogin(state: $0, storesLogin: keepsSessions) }
        let session = AppSession(storage: login)
        sessions.append(Weak(session))
        guard let state, let login else { return (session, nil) }
        return (session, SessionLists(state: state, session: session, holder: login))
    }

    /// Ends every session alive (`control.backend.reset`).
    func endAll(_ reason: AppSession.End) {
        for entry in sessions { entry.session?.end(reason) }
    }
}
