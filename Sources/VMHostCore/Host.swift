@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// The host of one connection: its view-models, their subscriptions, and the method table of
/// protocol version 1.
///
/// Delivery rules (see protocol/SPEC.md, "Ordering"):
/// - property changes are collected while a message (or a completion of async work) is handled
///   and flushed as one `vm.changed` per subscription, last values only, unchanged values omitted;
/// - pending changes are always flushed before a reply is queued, so a reply follows every
///   notification its request caused;
/// - an event first flushes its view-model's pending changes, then is queued whole, so a
///   view-model's changes and events keep their order.
///
/// - Important: Isolated to ``HostActor``. Frames enter through ``Connection``.
@_spi(Transport)
@HostActor
public final class Host {
    /// What a host serves and how it presents itself.
    public struct Configuration {
        /// The host's clock: every timer, latency and deadline goes through it.
        package var clock: any HostClock
        /// Kinds that `vm.create` can make.
        package var factories: [ViewModelFactory] {
            didSet { catalog = Self.catalog(of: factories) }
        }
        /// ``factories`` by kind (the last of a kind if several), made when they are set: every
        /// host of this configuration shares it.
        package private(set) var catalog: [String: ViewModelFactory]
        /// Serve `control.*` methods.
        package var testControls: Bool
        /// Extra test-control methods (the app's), registered only with ``testControls``.
        package var controlMethods: [(name: String, handler: RPCEngine.Handler)]
        /// `serverInfo.name` in `initialize`.
        package var serverName: String
        /// `serverInfo.version` in `initialize`.
        package var serverVersion: String
        /// The locale of view-models created before any `initialize {locale}`.
        package var defaultLocale: AppLocale
        /// The locales `initialize {locale}` accepts (``AppLocale/match(_:in:)``).
        package var locales: [AppLocale]
        /// The kinds of domain error the app's commands fail with: the `kind` enumeration of every
        /// error schema in `host.describe`. Nil: any string.
        package var errorKinds: [String]?
        /// What one connection may hold at once (Host+Limits.swift); no cap by default.
        public var limits = Limits()

        /// A configuration serving `factories` on `clock`; an app that says nothing about locales
        /// offers English only.
        package init(
            clock: any HostClock, factories: [ViewModelFactory], testControls: Bool = false,
            controlMethods: [(name: String, handler: RPCEngine.Handler)] = [], serverName: String = "vmhost",
            serverVersion: String = vmhostVersion, defaultLocale: AppLocale = .en,
            locales: [AppLocale]? = nil, errorKinds: [String]? = nil
        ) {
            self.clock = clock
            self.factories = factories
            self.catalog = Self.catalog(of: factories)
            self.testControls = testControls
            self.controlMethods = controlMethods
            self.serverName = serverName
            self.serverVersion = serverVersion
            self.defaultLocale = defaultLocale
            self.locales = locales ?? [defaultLocale]
            self.errorKinds = errorKinds
        }

        private static func catalog(of factories: [ViewModelFactory]) -> [String: ViewModelFactory] {
            var catalog: [String: ViewModelFactory] = [:]
            for factory in factories { catalog[factory.kind] = factory }
            return catalog
        }
    }

    /// The kind, context and instance of the live view-model `handle`, if any: for the test kit,
    /// which checks that nothing holds a view-model once `vm.dispose` has answered.
    package func liveViewModel(_ handle: String) -> (kind: String, context: ViewModelContext, instance: AnyObject)? {
        viewModels[handle].map { ($0.kind, $0.context, $0.instance) }
    }

    struct Entry {
        let handle: String
        let kind: String
        let context: ViewModelContext
        let instance: AnyObject
        var subscriptions: [Int] = []
        /// What `vm.create` carried as `args` (``keepsScreens``).
        var args: JSON? = nil
        /// The last value sent to each value input kept, in the order sent (``keepsScreens``).
        var kept: [(input: String, value: JSON)] = []
    }

    final class Subscription {
        let id: Int
        let name: String
        let vm: String
        /// Whether it sends each property of the view-model, by its position in the context. What
        /// it last sent is not kept: every subscription of a view-model was sent the values of its
        /// last flush, and the properties tell what changed since (``AnyProperty/takeChange()``).
        let sends: [Bool]
        let events: [String]
        let diff: Bool

        init(id: Int, vm: String, sends: [Bool], events: [String], diff: Bool) {
            self.id = id
            self.name = "s\(id)"
            self.vm = vm
            self.sends = sends
            self.events = events
            self.diff = diff
        }

        /// Whether it sends the property at `position`.
        func sends(_ position: Int) -> Bool {
            sends.indices.contains(position) && sends[position]
        }

        /// The id in a name this host made (`s12` → 12), else nil.
        static func id(named name: String) -> Int? {
            guard name.first == "s", let id = Int(name.dropFirst()), id > 0, "s\(id)" == name else { return nil }
            return id
        }
    }

    /// What it serves.
    package let configuration: Configuration
    /// The JSON-RPC engine of its connection.
    public let engine: RPCEngine
    nonisolated let output: OutputQueue<ChangedMessage>
    var locale: AppLocale

    /// The view-models, by handle, and the subscriptions, by id: `@exclusivity(unchecked)`, as
    /// ``dirty`` below: each access is a read or a write of an entry (or a standard-library
    /// operation on it) that calls out to nothing while it lasts; every message and change reads them.
    @exclusivity(unchecked) var viewModels: [String: Entry] = [:]
    var creationOrder: [String] = []
    var nextHandle = 0
    @exclusivity(unchecked) var subscriptions: [Int: Subscription] = [:]
    var nextSubscription = 0
    /// Whether the host keeps what makes its view-models again after a restart: each one's args
    /// and the values sent to its value inputs (``screens()``, Host+Restart.swift).
    @_spi(Transport) public var keepsScreens = false
    /// The app's secret member names (``Redaction/secretMembers``, a `token`): a value sent that
    /// holds one of them, at any depth, is not kept.
    @_spi(Transport) public var keptSecretMembers: Set<String> = []
    /// The kinds `vm.create` can make, by name (the configuration's, shared by every host of it).
    var catalog: [String: ViewModelFactory] { configuration.catalog }
    var describedKinds: [String: DescribedKind] = [:]

    /// View-models with changed properties not flushed yet, in order of first change. Like the
    /// flag below, `@exclusivity(unchecked)`: each access is a read or a write that calls out to
    /// nothing while it lasts (a flush copies what it takes before it asks properties for their
    /// changes), so none can overlap another (docs/Guide.md, "Exclusivity checks").
    @exclusivity(unchecked) var dirty: [String: [any AnyProperty]] = [:]
    @exclusivity(unchecked) var dirtyOrder: [String] = []
    /// Whether changes are flushed after the work that made them (a ``Connection`` feeds this host).
    var flushesAfterWork = false {
        didSet { if flushesAfterWork && !dirtyOrder.isEmpty { requestFlushAfterWork() } }
    }
    /// Whether a flush after work is asked for and not run yet.
    @exclusivity(unchecked) var flushRequested = false
    /// Whether this host is in a turn (``Connection`` handles one of its messages): its changes
    /// are then written by the turn's end (``endTurn()``), never by a flush after work that
    /// another host's work, run meanwhile on the host thread, triggers. A turn is its own.
    @exclusivity(unchecked) package var inTurn = false

    /// Called with the exit code when the client sends `exit`.
    public var onExit: ((Int32) -> Void)?
    /// Called for log-worthy problems (bad input that was answered with an error).
    package var log: ((String) -> Void)?
    /// Whether `shutdown` was received (`exit` then exits 0).
    @_spi(Transport) public internal(set) var hasShutDown = false
    /// Set once the input has ended. It changes nothing the host does: every message read before
    /// the end is handled as usual, commands included; the transport then waits for
    /// ``hasWorkInFlight`` to turn false (protocol/SPEC.md §7).
    package var inputEnded = false
    /// Set once the server is stopping (a signal to a transport that serves many connections): a
    /// command sent now is not started and answers -32800 (SPEC §12).
    public var isStopping = false
    /// The commands started by `vm.send` (requests and notifications alike), while they may run.
    var sentCommands: [SentCommand] = []
    /// ``sentCommands``' count after it was last pruned: it is pruned again when it doubles.
    var sentCommandsPruned = 0

    @HostActor
    struct SentCommand {
        weak var execution: CommandExecution?
        var isRunning: Bool { execution.map { !$0.isFinished } ?? false }
    }

    /// A host of `configuration`, its output queued in ``outputQueue``.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.locale = configuration.defaultLocale
        let output = OutputQueue<ChangedMessage>()
        self.output = output
        // The engine answers through the host's one writer (Host+Output.swift), bound once the
        // host exists.
        engine = RPCEngine(methods: Self.methodTable(testControls: configuration.testControls)) { _ in }
        engine.owner = self
        engine.output = { [unowned self] in self.writeReply($0) }
        engine.onProblem = { [unowned self] in self.log?($0) }
        registerControls()
    }

    /// The queue this host writes to: a writer thread (stdio) or a test takes from it.
    public nonisolated var outputQueue: OutputQueue<ChangedMessage> { output }

    /// Whether a request is still unanswered or a command started by `vm.send` (a request or a
    /// notification) still runs: what the end of input waits for (protocol/SPEC.md §7). Work the
    /// host started by itself (a parent's reload) and timers (a countdown) do not count.
    package var hasWorkInFlight: Bool {
        if engine.pendingCount > 0 { return true }
        sentCommands.removeAll { !$0.isRunning }
        sentCommandsPruned = sentCommands.count
        return !sentCommands.isEmpty
    }

    /// The commands started by `vm.send` that still run (for a cap, Host+Limits.swift).
    var runningSentCommands: Int {
        sentCommands.removeAll { !$0.isRunning }
        sentCommandsPruned = sentCommands.count
        return sentCommands.count
    }

    /// Keeps `execution`, started by `vm.send`, for ``hasWorkInFlight`` and the cap of commands.
    func track(_ execution: CommandExecution) {
        if sentCommands.count >= max(64, 2 * sentCommandsPruned) {
            sentCommands.removeAll { !$0.isRunning }
            sentCommandsPruned = sentCommands.count
        }
        sentCommands.append(SentCommand(execution: execution))
    }

    /// The view-models created and not disposed.
    public var liveViewModelCount: Int { viewModels.values.reduce(0) { $0 + ($1.context.isDisposed ? 0 : 1) } }

    /// Cancels all work in flight and disposes every view-model (the end of the host, `shutdown`).
    public func cancelEverything() {
        cancelEverything(except: nil)
    }

    /// ``cancelEverything()``, `call` (a `shutdown` being answered) left to finish.
    package func cancelEverything(except call: Call?) {
        engine.cancelAll(except: call)
        for handle in creationOrder { viewModels[handle]?.context.dispose() }
        flush()
    }
}

/// The framework's version: what a host reports in `initialize` unless its configuration names
/// the app's. The repository states it in `VERSION`, which releases are tagged from; a test keeps the
/// two equal.
@_spi(Transport)
public let vmhostVersion = "0.3.0"
