import VMHostEventLoop
import VMHostWire

/// Where a screen's data stands, as a property a late subscriber can render (the seed's "loading /
/// no data / no network" states): `"idle"`, `"loading"`, `"loaded"`, `"empty"`, `"failed"`.
public enum LoadState: String, Sendable, CaseIterable, Codable {
    /// No load has ended yet (and none runs), or the screen was reset.
    case idle
    /// A load runs.
    case loading
    /// The last load that ended succeeded, and there is something to show.
    case loaded
    /// The last load that ended succeeded with nothing to show.
    case empty
    /// The last load that ended failed (`lastError` says how).
    case failed
}

/// The `loadState` and `lastError` outputs of a kind's loads (SPEC §5): written as `Loads` inside
/// the kind (``ViewModel/Loads``), named by SPEC, not by the stored property.
///
/// ```swift
/// let loads = Loads(tracking: \.refresh, \.loadMore, emptyWhen: \.items.isEmpty)
/// ```
///
/// - `loadState` is `loading` while a tracked command or work runs; otherwise the outcome of the
///   last tracked run that ended other than by cancellation: `loaded`, or `empty` while `emptyWhen`
///   holds (it follows the content: deleting the last row makes it `empty`), or `failed`. A
///   cancelled run leaves the state it found. It goes from `loading` to its outcome in one step,
///   after the run applied its result: no `idle` or `loading` blip in between.
/// - `lastError` is the error of the last failed run (as its `error` event carries it), and null
///   again once a run succeeds.
/// - ``reset()`` goes back to `idle` with no error (a cleared search box); a tracked run in flight
///   then reports nothing. ``succeeded()`` marks content shown without a load (a list saved by an
///   earlier run), for an initializer.
@HostActor
public final class LoadTracker<Owner: AnyObject>: DeclaredMember {
    private let sources: [PartialKeyPath<Owner>]
    private let emptyWhen: KeyPath<Owner, Bool>?
    /// `loadState`.
    public let loadState = Property(LoadState.idle, name: "loadState")
    /// `lastError`.
    public let lastError = Property(DomainError?.none, name: "lastError")
    /// The outcome of the last tracked run that ended.
    private let settled = Property(Settled.idle)
    private var flags: [Property<Bool>] = []
    private weak var owner: Owner?
    private let node = DerivedNode()
    /// Runs in flight when ``reset()`` was called: their outcomes are not reported.
    private var ignored: [ObjectIdentifier] = []
    private var runningSets: [() -> [CommandExecution]] = []

    private enum Settled: Equatable {
        case idle, succeeded, failed
    }

    /// The load state of the runs of `sources` (key paths to the kind's commands and works);
    /// `emptyWhen` says when a successful load has nothing to show.
    public init(tracking sources: PartialKeyPath<Owner>..., emptyWhen: KeyPath<Owner, Bool>? = nil) {
        self.sources = sources
        self.emptyWhen = emptyWhen
        ViewModelContext.declaring?.adopt(self)
    }

    /// The current state.
    public var state: LoadState { loadState.value }

    /// Back to `idle` with no error; the tracked runs in flight report nothing.
    public func reset() {
        ignored = runningSets.flatMap { $0() }.map(ObjectIdentifier.init)
        lastError.set(nil)
        settled.set(.idle)
    }

    /// Content is shown without a load (a saved list): `loaded`, or `empty` while `emptyWhen` holds.
    public func succeeded() {
        lastError.set(nil)
        settled.set(.succeeded)
    }

    func bind(name: String, owner: AnyObject, context: ViewModelContext) {
        self.owner = owner as? Owner
        context.declareOutput(loadState)
        context.declareOutput(lastError)
    }

    func start(context: ViewModelContext) {
        guard let owner else { return }
        for path in sources {
            guard let source = owner[keyPath: path] as? any LoadSource else {
                preconditionFailure("\(context.kind): Loads tracks \(path), which is not a command or work of the kind")
            }
            flags.append(source.runFlag)
            runningSets.append { [weak source] in source?.runningNow ?? [] }
            source.onRunEnd { [weak self] run, outcome in self?.ended(run, outcome) }
        }
        node.recompute = { [weak self] in self?.update() }
        update()
    }

    private func ended(_ run: CommandExecution, _ outcome: CommandOutcome) {
        if let index = ignored.firstIndex(of: ObjectIdentifier(run)) {
            ignored.remove(at: index)
            return
        }
        switch outcome {
        case .succeeded:
            lastError.set(nil)
            settled.set(.succeeded)
        case .failed(let error):
            lastError.set(error)
            settled.set(.failed)
        case .cancelled, .crashed:
            break
        }
    }

    private func update() {
        let state = node.track { () -> LoadState in
            if flags.contains(where: { $0.value }) { return .loading }
            switch settled.value {
            case .idle: return .idle
            case .failed: return .failed
            case .succeeded:
                guard let owner, let emptyWhen else { return .loaded }
                return owner[keyPath: emptyWhen] ? .empty : .loaded
            }
        }
        loadState.set(state)
    }

    func tearDown() {
        node.stop()
        loadState.tearDown()
        lastError.tearDown()
        settled.tearDown()
    }
}

/// A command or work whose runs a ``LoadTracker`` follows.
@HostActor
protocol LoadSource: AnyObject {
    var runFlag: Property<Bool> { get }
    var runningNow: [CommandExecution] { get }
    func onRunEnd(_ observer: @escaping (CommandExecution, CommandOutcome) -> Void)
}

extension ViewModelCommand: LoadSource {
    var runFlag: Property<Bool> { runs.isExecuting }
    var runningNow: [CommandExecution] { runs.running }
    func onRunEnd(_ observer: @escaping (CommandExecution, CommandOutcome) -> Void) { runs.endObservers.append(observer) }
}

extension ViewModelWork: LoadSource {
    var runFlag: Property<Bool> { runs.isExecuting }
    var runningNow: [CommandExecution] { runs.running }
    func onRunEnd(_ observer: @escaping (CommandExecution, CommandOutcome) -> Void) { runs.endObservers.append(observer) }
}
