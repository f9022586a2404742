import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// Records everything a view-model outputs, in order, for tests that assert whole histories.
///
/// ```swift
/// let recorder = ViewModelRecorder()
/// recorder.keep(TodoListViewModel(args: .init(), context: recorder.context, api: stub))
/// recorder.execute("load")
/// try recorder.expect([.changed("loading", true)])
/// await stub.calls.call(.list).succeed([Todo(id: "t1", title: "Milk")])
/// await recorder.finished(0)
/// try recorder.expect([.changed("items", …), .changed("loading", false)])
/// try recorder.finish()          // fails on output nobody asserted and on work still running
/// ```
///
/// Exhaustive, as a store under test is: ``expect(_:)`` compares the whole history since the last
/// one, and ``finish()`` fails while output is unasserted, a command runs or a timer is armed.
///
/// Parallel suites: every recorder has its own context and ``ManualClock``, so tests running at the
/// same time never see each other's output or time. They share the one host thread
/// (``EventLoop/shared``): ``settle()`` waits until that thread is idle, which may include another
/// test's work; that costs time, never a different result.
@HostActor
public final class ViewModelRecorder: ViewModelContextObserver {
    /// One output of the view-model, as it happened.
    public enum Record: Equatable, CustomStringConvertible, Sendable {
        /// A property took a new value.
        case changed(String, JSON)
        /// An event was emitted with a value.
        case event(String, JSON)

        public var description: String {
            switch self {
            case .changed(let name, let value): "changed \(name) = \(value)"
            case .event(let name, let value): "event \(name) \(value)"
            }
        }
    }

    /// The clock of the view-model under test: time moves only with ``advance(ms:)``.
    public let clock: ManualClock
    /// The context to build the view-model in.
    public let context: ViewModelContext
    /// The records not taken yet.
    public private(set) var records: [Record] = []

    /// A recorder with a fresh context named `handle`, of `kind`, in `locale`, on `clock`.
    public init(kind: String = "Test", locale: AppLocale = .zhHans, clock: ManualClock = ManualClock(), handle: String = "vm1") {
        self.clock = clock
        context = ViewModelContext(handle: handle, kind: kind, clock: clock, locale: locale)
        context.observer = self
    }

    /// Records a property change (called by the context).
    public func propertyDidChange(_ context: ViewModelContext, _ property: any AnyProperty) {
        records.append(.changed(property.name, property.json))
    }

    /// Records an event (called by the context).
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

    /// Takes the records since the last take and throws unless they are exactly `expected`, in
    /// order; the message lists both histories.
    public func expect(_ expected: [Record]) throws(TestKitFailure) {
        let actual = take()
        guard actual != expected else { return }
        func lines(_ records: [Record]) -> String { records.isEmpty ? "  (nothing)" : records.map { "  \($0)" }.joined(separator: "\n") }
        throw TestKitFailure("the history differs.\nexpected:\n\(lines(expected))\nrecorded:\n\(lines(actual))")
    }

    /// Ends a test: throws when output is left that nobody asserted, when a command of the
    /// view-model still runs (or one started with ``execute(_:_:)`` has no outcome yet), or when
    /// the clock holds a timer. `also` adds checks, such as ``StubCalls/verifyNothingPending()``.
    public func finish(also checks: [() throws(TestKitFailure) -> Void] = []) throws(TestKitFailure) {
        var problems: [String] = []
        if !records.isEmpty { problems.append("output nobody asserted: \(records.map(\.description).joined(separator: "; "))") }
        let running = context.inputs.compactMap { $0 as? any AnyCommand }.filter { $0.runningCount > 0 }.map(\.name)
        if !running.isEmpty { problems.append("commands still running: \(running.joined(separator: ", "))") }
        let open = outcomes.indices.filter { outcomes[$0] == nil && !refused.contains($0) }
        if !open.isEmpty { problems.append("executions without an outcome: \(open.map(String.init).joined(separator: ", "))") }
        if clock.pendingCount > 0 { problems.append("timers still armed: \(clock.pendingCount)") }
        for check in checks {
            do throws(TestKitFailure) { try check() } catch { problems.append(error.description) }
        }
        guard problems.isEmpty else { throw TestKitFailure("unfinished test:\n  " + problems.joined(separator: "\n  ")) }
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

    /// Starts a command; its outcome is collected in ``outcomes`` under the next index. A refused
    /// send keeps its index, with no outcome ever (nil), and throws the refusal.
    @discardableResult
    public func execute(_ input: String, _ value: JSON = .null) throws(InputError) -> CommandExecution {
        guard let command = context.input(named: input) as? any AnyCommand else { fatalError("no command \(input)") }
        let index = outcomes.count
        outcomes.append(nil)
        do throws(InputError) {
            return try command.execute(value) { [weak self] in self?.outcomes[index] = $0 }
        } catch {
            refused.insert(index)
            throw error
        }
    }

    /// Outcomes of ``execute(_:_:)`` calls in order; nil while running.
    public private(set) var outcomes: [CommandOutcome?] = []
    /// The indices of ``outcomes`` whose send was refused.
    private var refused: Set<Int> = []

    /// Why the command `input` would be refused now with `value`, or nil when it would run: the
    /// reason a client reads in -32003 (disabled, or its policy), or the message of -32602.
    public func disabledReason(_ input: String, _ value: JSON = .null) -> String? {
        guard let command = context.input(named: input) as? any AnyCommand else { fatalError("no command \(input)") }
        switch command.refusal(for: value) {
        case nil: return nil
        case .disabled(let reason)?: return reason
        case let refusal?: return refusal.message
        }
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
