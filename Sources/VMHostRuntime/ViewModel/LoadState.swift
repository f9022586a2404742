import VMHostEventLoop
import VMHostWire

/// Where a screen's data stands, as a property a late subscriber can render (the seed's "loading /
/// no data / no network" states): `"idle"`, `"loading"`, `"loaded"`, `"empty"`, `"failed"`.
public enum LoadState: String, Sendable, CaseIterable, JSONEncodable {
    /// No load has ended yet (and none runs).
    case idle
    /// A load runs.
    case loading
    /// The last load that ended succeeded, and there is something to show.
    case loaded
    /// The last load that ended succeeded with nothing to show.
    case empty
    /// The last load that ended failed (`lastError` says how).
    case failed

    public var json: JSON { .string(rawValue) }

    public static var jsonSchema: JSON { ["type": "string", "enum": .array(allCases.map { .string($0.rawValue) })] }
}

/// The `loadState` and `lastError` properties of a view-model whose loads run as commands.
///
/// `loadState` is `loading` while one of the load commands runs; otherwise it is the outcome of the
/// last load that ended other than by cancellation: a cancelled load leaves the state it found.
/// `lastError` is the error object of the last failed load (as its `error` event carries it), and
/// null again once a load succeeds.
///
/// The view-model reports outcomes from inside its load commands' bodies (``succeeded(empty:)``,
/// ``failed(_:input:)``), where a cancelled load never gets to report.
@HostActor
public final class LoadTracker {
    public let loadState: Property<LoadState>
    public let lastError: Property<DomainError?>
    /// The outcome of the last load that ended; not an output.
    private let settled: Property<LoadState>
    private let context: ViewModelContext
    /// The `isExecuting` of the load commands.
    private var flags: [Property<Bool>] = []

    /// Declares `loadState` and `lastError` on `context`; ``track(_:)`` names the load commands.
    /// `initial` is the outcome the view-model starts from: `idle`, or `loaded` / `empty` for data
    /// it shows from the start (a list saved by an earlier run).
    public init(context: ViewModelContext, initial: LoadState = .idle) {
        self.context = context
        settled = Property("settledLoadState", initial)
        loadState = context.property("loadState", initial)
        lastError = context.property("lastError", DomainError?.none)
    }

    /// Makes `loadState` follow the running state of `commands` (each one's `isExecuting`).
    public func track(_ commands: [Property<Bool>]) {
        flags = commands
        // Reads the flags through `self`: a closure holding them would be kept by their own
        // observers, a cycle that outlives the view-model.
        derive(loadState, from: commands.map { $0 as any ObservableProperty } + [settled]) { [unowned self] in
            flags.contains { $0.value } ? .loading : settled.value
        }
    }

    /// A load applied its result; `empty` when there is nothing to show.
    public func succeeded(empty: Bool) {
        lastError.value = nil
        settled.value = empty ? .empty : .loaded
    }

    /// The shown content changed outside a load (a row deleted or added): a settled `loaded` or
    /// `empty` follows it; `idle` and `failed` stay as they are.
    public func contentChanged(empty: Bool) {
        guard settled.value == .loaded || settled.value == .empty else { return }
        settled.value = empty ? .empty : .loaded
    }

    /// A load of `input` failed with `error` (not cancelled): it becomes ``lastError``, as the
    /// runtime will emit it on `error`.
    public func failed(_ error: DomainError, input: String) {
        guard !Task.isCancelled else { return }
        lastError.value = error.reaching(input: input, locale: context.locale)
        settled.value = .failed
    }

    /// Runs one load's body, reporting a domain failure before rethrowing it.
    public func run(_ input: String, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as DomainError {
            failed(error, input: input)
            throw error
        }
    }
}
