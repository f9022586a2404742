@_spi(Transport) import VMHostEventLoop
import VMHostWire

/// Work of a kind that no input starts (a debounced search, the first load of a screen): the same
/// policies, cancellation and activity as a command, invisible on the wire. Written as `Work`
/// inside the kind (``ViewModel/Work``) and started with ``run(_:)``:
///
/// ```swift
/// let search = Work(.latest) { (vm, query: String) in try await vm.find(query) }
/// ...
/// $query.debounce(for: .milliseconds(300)).removeDuplicates().run(search)   // or vm.search.run(text)
/// ```
///
/// The body may await any async code and throw any error, as a command's. A run that fails with a
/// domain error emits it once on the view-model's `error` event, with `input: null`; a cancelled
/// run changes nothing. Disposing the view-model cancels its runs.
/// Run from the initializer, it starts once the view-model is made.
@HostActor
public final class ViewModelWork<Owner: AnyObject, Value: Sendable>: DeclaredMember {
    let runs: Runs<Value>
    /// The stored property's name (the work is invisible on the wire: for messages only).
    private(set) var name = ""
    private var body: (@HostActor (Owner, Value) async throws -> Void)?
    private weak var owner: Owner?
    private weak var declaredIn: ViewModelContext?

    /// Work of `body` under `policy`, started with a value.
    ///
    /// Nonisolated for the reason ``ViewModelCommand``'s initializer is: a body that awaits a
    /// nonisolated function (`Task.sleep`, a free `async` function) makes the stored property's
    /// initial value nonisolated. It runs on the host thread all the same (checked).
    nonisolated public init(_ policy: CommandPolicy<Value>, _ body: @escaping @HostActor (Owner, Value) async throws -> Void) {
        (runs, declaredIn) = HostActor.assumeIsolated {
            let runs = Runs(policy: policy)
            runs.restartsInPlace = true
            return (runs, ViewModelContext.declaring)
        }
        self.body = body
        HostActor.assumeIsolated { declaredIn?.adopt(self) }
    }

    /// True while a run runs, as a property (to observe or chain).
    public var isExecuting: Property<Bool> { runs.isExecuting }

    /// True while a run runs: read in a `@Derived` output, a source of it (`isSearching`).
    public var isRunning: Bool { runs.isExecuting.value }

    /// Starts a run with `value`, unless the policy refuses it (``CommandPolicy/ignore`` while one runs).
    public func run(_ value: Value) {
        (runs.context ?? declaredIn)?.afterBinding { [weak self] in
            guard let self, let body = self.body else { return }
            let (refusal, key) = runs.admit(value)
            guard refusal == nil else { return }
            _ = runs.start(key: key, body: { [weak owner] in
                guard let owner else { throw CancellationError() }
                try await body(owner, value)
                return nil
            }, completion: { _ in })
        }
    }

    /// Cancels every run.
    public func cancel() { runs.cancelAll() }

    func bind(name: String, owner: AnyObject, context: ViewModelContext) {
        self.name = name
        self.owner = owner as? Owner
        runs.context = context
    }

    func cancelRuns() { runs.cancelAll() }

    func tearDown() {
        body = nil
        runs.tearDown()
    }
}

extension ViewModelWork where Value == NoValue {
    /// Work of `body` under `policy`, started without a value.
    nonisolated public convenience init(_ policy: CommandPolicy<NoValue>, _ body: @escaping @HostActor (Owner) async throws -> Void) {
        self.init(policy) { owner, _ in try await body(owner) }
    }

    /// Starts a run.
    public func run() { run(NoValue()) }
}
