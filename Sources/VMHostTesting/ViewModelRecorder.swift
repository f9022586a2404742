import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// Records everything a view-model outputs, in order, for tests that assert whole histories.
///
/// ```swift
/// let recorder = ViewModelRecorder()
/// let vm = recorder.keep(ProductListViewModel(args: .init(), context: recorder.context, api: stub))
/// try recorder.send("refresh")
/// #expect(recorder.take() == [.changed("isRefreshing", true)])
/// ```
@HostActor
public final class ViewModelRecorder: ViewModelContextObserver {
    public enum Record: Equatable, CustomStringConvertible, Sendable {
        case changed(String, JSON)
        case event(String, JSON)

        public var description: String {
            switch self {
            case .changed(let name, let value): "changed \(name) = \(value)"
            case .event(let name, let value): "event \(name) \(value)"
            }
        }
    }

    public let clock: ManualClock
    public let context: ViewModelContext
    public private(set) var records: [Record] = []

    public init(kind: String = "Test", locale: AppLocale = .zhHans, clock: ManualClock = ManualClock(), handle: String = "vm1") {
        self.clock = clock
        context = ViewModelContext(handle: handle, kind: kind, clock: clock, locale: locale)
        context.observer = self
    }

    public func propertyDidChange(_ context: ViewModelContext, _ property: any AnyProperty) {
        records.append(.changed(property.name, property.json))
    }

    public func eventDidEmit(_ context: ViewModelContext, name: String, value: JSON) {
        records.append(.event(name, value))
    }

    /// Keeps `viewModel` alive as long as its context may run its code, as the host does for the
    /// view-models it creates: view-model closures capture `unowned self`, and a command or timer
    /// can still finish after a test has dropped its own reference.
    @discardableResult
    public func keep<VM: AnyObject>(_ viewModel: VM) -> VM {
        context.retain(viewModel)
        return viewModel
    }

    /// Records since the last take.
    public func take() -> [Record] {
        defer { records.removeAll() }
        return records
    }

    /// The current value of a property, by name.
    public func value(_ name: String) -> JSON? { context.property(named: name)?.json }

    /// Sends a value or trigger input.
    public func send(_ input: String, _ value: JSON = .null) throws(InputError) {
        guard let target = context.input(named: input) as? any SynchronousInput else {
            fatalError("no value or trigger input \(input)")
        }
        try target.send(value)
    }

    /// Starts a command; its outcome is collected in ``outcomes`` under the returned index.
    @discardableResult
    public func execute(_ input: String, _ value: JSON = .null) throws(InputError) -> CommandExecution {
        guard let command = context.input(named: input) as? any AnyCommand else { fatalError("no command \(input)") }
        let index = outcomes.count
        outcomes.append(nil)
        return try command.execute(value) { [weak self] in self?.outcomes[index] = $0 }
    }

    /// Outcomes of ``execute(_:_:)`` calls in order; nil while running.
    public private(set) var outcomes: [CommandOutcome?] = []

    /// Why the command `input` (one that takes no value) would be refused now, or nil when it would
    /// run: its ``Command/disabledReason``, the enabled state a client sees as -32003.
    public func disabledReason(_ input: String) -> String? {
        guard let command = context.input(named: input) as? Command<NoValue> else {
            fatalError("no command \(input) without a value")
        }
        return command.disabledReason()
    }

    /// Lets started work run (tasks, zero-latency calls) without moving the clock.
    public func settle() async { await EventLoop.shared.settle() }

    /// Waits until `condition` holds, then lets the work it released run.
    ///
    /// A stub's answer resumes the calling task through the global executor before it comes back to
    /// the host thread, so ``settle()`` alone can return too early: wait for the effect itself.
    public func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
        await settle()
    }

    /// Waits until the command started as `index` (its place in ``outcomes``) has ended.
    @discardableResult
    public func finished(_ index: Int) async -> CommandOutcome? {
        await until { outcomes[index] != nil }
        return outcomes[index]
    }

    /// Moves the clock and lets the work it releases run.
    public func advance(ms: Int) async { await clock.advance(by: .milliseconds(ms)) }
}
