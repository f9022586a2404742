import Testing
import VMHost
@_spi(Transport) import VMHostEventLoop

/// One view-model under test: built in its own context on a ``ManualClock``, every output recorded
/// in order, inputs sent as a client would send them, time moved by hand.
///
/// ```swift
/// @Test func threeKeystrokesMakeOneSearch() async {
///     let api = StubArticleAPI()
///     let test = ViewModelTest { SearchViewModel(api: api) }
///     test.set(\.$query, "s")
///     test.set(\.$query, "sw")
///     await test.advance(by: .milliseconds(100))
///     test.set(\.$query, "swi")
///     await test.advance(by: .milliseconds(300))
///     await api.calls.call(.search).succeed([swift])
///     await test.settle()
///     test.expect([.changed(\.$loadState, .loading), .changed(\.$articles, [swift]), .changed(\.$loadState, .loaded)])
///     await test.finish(also: [api.calls.verifyNothingPending])
/// }
/// ```
///
/// Exhaustive, as a store under test is: ``expect(_:sourceLocation:)`` compares the whole history
/// since the last one, and ``finish(also:sourceLocation:)`` fails while output is unasserted, a
/// command or work runs, a sent command has no outcome, or a timer is armed; it then disposes the
/// view-model and fails if anything still holds it.
///
/// Every failure is recorded as an issue of the running test at the line of the call that found
/// it (swift-testing), never thrown or trapped: a misspelled name fails the test with the names
/// that exist. Every wait (``settle()``, ``CommandRun/finished(sourceLocation:)``, ``until(_:sourceLocation:_:)``,
/// ``StubCalls/call(_:occurrence:sourceLocation:)``) gives up after ``timeout`` of real time with
/// a failure that names what it waited for: a broken test fails in seconds, it does not hang.
///
/// Each test has its own context, clock and work group: ``settle()`` waits for this view-model's
/// work only, so tests may run in parallel without waiting on each other.
@HostActor
public final class ViewModelTest<VM: ViewModel> {
    /// The view-model's clock: time moves only with ``advance(by:)``.
    public let clock: ManualClock
    /// The view-model's context.
    package let context: ViewModelContext
    /// How long, in real time, a wait lasts before it fails (5 s unless set).
    public var timeout: Duration
    private let group = WorkGroup()
    private var records: [Record] = []
    private var runs: [CommandRun] = []
    private var finished = false

    /// Builds the view-model `make` returns in a new context named `handle`, in `locale`, on `clock`.
    /// `lookup` finds the other view-models it may reach by handle.
    public init(
        locale: AppLocale = .en, clock: ManualClock = ManualClock(), handle: String = "vm1", timeout: Duration = .seconds(5),
        lookup: @escaping (String) -> AnyObject? = { _ in nil }, _ make: () -> VM
    ) {
        self.clock = clock
        self.timeout = timeout
        context = ViewModelContext(handle: handle, kind: VM.kind, clock: clock, locale: locale)
        context.workGroup = group
        context.lookup = lookup
        _ = context.build(make)
        recorder.start(context)
        context.observer = recorder
        TurnEnds.register(group) { [weak self] in self?.recorder.flush() }
    }

    private lazy var recorder = Recorder<VM> { [unowned self] in records.append($0) }

    /// The view-model under test. Read it here each time rather than keeping it: ``finish(also:sourceLocation:)``
    /// checks that nothing holds it once it is disposed.
    public var viewModel: VM {
        guard let instance = context.viewModel as? VM else {
            preconditionFailure("\(VM.kind): the view-model under test was released (the test has finished)")
        }
        return instance
    }

    // MARK: Reading

    /// The records since the last take, and forgets them.
    public func take() -> [Record] {
        recorder.flush()
        defer { records.removeAll() }
        return records
    }

    /// Takes the records since the last take and fails unless they are exactly `expected`, in
    /// order; the failure names the first entry that differs (its index, what was expected there
    /// and what was recorded), any expected name the view-model has no output of, and lists both
    /// histories.
    public func expect(_ expected: [Record], sourceLocation: SourceLocation = #_sourceLocation) {
        let actual = take()
        let resolved = expected.map { $0.resolved(in: viewModel) }
        guard actual != resolved else { return }
        Issue.record(Comment(rawValue: Self.difference(expected: resolved, recorded: actual, in: context)), sourceLocation: sourceLocation)
    }

    /// What ``expect(_:sourceLocation:)`` says when `expected` and `recorded` differ.
    static func difference(expected: [Record], recorded: [Record], in context: ViewModelContext) -> String {
        func lines(_ records: [Record]) -> String { records.isEmpty ? "  (nothing)" : records.map { "  \($0)" }.joined(separator: "\n") }
        let index = zip(expected, recorded).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(expected.count, recorded.count)
        let wanted = index < expected.count ? "\(expected[index])" : "nothing more"
        let got = index < recorded.count ? "\(recorded[index])" : "nothing more"
        var text = "the history differs at entry \(index): expected \(wanted), recorded \(got)."
        let properties = context.properties.map(\.name)
        let events = context.events.map(\.name)
        for record in expected {
            let known = record.kind == .changed ? properties : events
            guard !known.contains(record.outputName) else { continue }
            let what = record.kind == .changed ? "property output" : "event"
            text += "\n\(VM.kind) has no \(what) \"\(record.outputName)\" (\(what)s: \(known.joined(separator: ", ")))."
            break
        }
        return text + "\nexpected:\n\(lines(expected))\nrecorded:\n\(lines(recorded))"
    }

    /// The current value of the output property `name`, as JSON; nil, and a failure naming the
    /// properties, when there is none.
    public func value(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> JSON? {
        guard let property = context.property(named: name) else {
            fail("no property output \"\(name)\" (properties: \(context.properties.map(\.name).joined(separator: ", ")))", sourceLocation)
            return nil
        }
        return property.json
    }

    // MARK: Sending, typed

    /// Sets the value input `input` (`\.$query`) to `value`, as a client's send of it would.
    public func set<Value: InputValue>(_ input: KeyPath<VM, Property<Value>>, _ value: Value, sourceLocation: SourceLocation = #_sourceLocation) {
        let property = viewModel[keyPath: input]
        if !context.setInput(property, to: value) {
            fail("\"\(property.name)\" is no value input (inputs: \(inputNames))", sourceLocation)
        }
        recorder.flush()
    }

    /// Fires the trigger `trigger` with `value`; the refusal it answered, if any. A body that failed
    /// with a domain error is recorded as the `error` event (``Record/failed(_:)``); one that threw
    /// any other error (a bug: -32603 on the wire) fails the test.
    @discardableResult
    public func fire<Value>(
        _ trigger: KeyPath<VM, ViewModelTrigger<VM, Value>>, _ value: Value, sourceLocation: SourceLocation = #_sourceLocation
    ) -> InputError? {
        let target = viewModel[keyPath: trigger]
        return answered(target.name, sourceLocation) { () throws(InputError) in try target.fire(decoded: value) }
    }

    /// Fires the trigger `trigger`, which takes no value; the refusal it answered, if any.
    @discardableResult
    public func fire(_ trigger: KeyPath<VM, ViewModelTrigger<VM, NoValue>>, sourceLocation: SourceLocation = #_sourceLocation) -> InputError? {
        fire(trigger, NoValue(), sourceLocation: sourceLocation)
    }

    /// Runs a send of a value or trigger input: its refusal, or nil; a crash fails the test.
    private func answered(_ name: String, _ sourceLocation: SourceLocation, _ send: () throws(InputError) -> CommandOutcome) -> InputError? {
        // The send is a turn of its own, as a message is on the wire: what it changed is recorded now.
        defer { recorder.flush() }
        do throws(InputError) {
            if case .crashed(let detail) = try send() { fail("\(name) threw an error that is no domain failure (-32603): \(detail)", sourceLocation) }
            return nil
        } catch {
            return error
        }
    }

    /// Sends the command `command` with `value`: its run, to await (or its refusal).
    @discardableResult
    public func send<Value, Result>(_ command: KeyPath<VM, ViewModelCommand<VM, Value, Result>>, _ value: Value) -> CommandRun {
        let target = viewModel[keyPath: command]
        return start(target.name) { (completion) throws(InputError) in try target.execute(decoded: value, completion: completion) }
    }

    /// Sends the command `command`, which takes no value: its run, to await (or its refusal).
    @discardableResult
    public func send<Result>(_ command: KeyPath<VM, ViewModelCommand<VM, NoValue, Result>>) -> CommandRun {
        send(command, NoValue())
    }

    // MARK: Sending, by name and JSON

    /// Sends the value or trigger input `name` with `value`, as `vm.send` does; the refusal it
    /// answered, if any. An unknown name fails the test with the inputs that exist.
    @discardableResult
    public func send(_ name: String, _ value: JSON = .null, sourceLocation: SourceLocation = #_sourceLocation) -> InputError? {
        guard let input = context.input(named: name) as? any SynchronousInput else {
            fail("no value or trigger input \"\(name)\" (inputs: \(inputNames))", sourceLocation)
            return nil
        }
        return answered(name, sourceLocation) { () throws(InputError) in try input.send(value) }
    }

    /// Sends the command input `name` with `value`, as `vm.send` does: its run, to await (or its
    /// refusal). An unknown name fails the test with the inputs that exist.
    @discardableResult
    public func execute(_ name: String, _ value: JSON = .null, sourceLocation: SourceLocation = #_sourceLocation) -> CommandRun {
        guard let command = context.input(named: name) as? any AnyCommand else {
            fail("no command input \"\(name)\" (inputs: \(inputNames))", sourceLocation)
            let run = CommandRun(name: name, test: group, timeout: timeout) {}
            run.refusal = .disabled(reason: "no such command")
            return run
        }
        return start(name) { (completion) throws(InputError) in try command.execute(value, completion: completion) }
    }

    /// Why the command `name` would be refused now with `value` (the reason of -32003, or the
    /// message of -32602), or nil when it would run. Nothing runs.
    public func refusal(_ name: String, _ value: JSON = .null, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        guard let command = context.input(named: name) as? any AnyCommand else {
            fail("no command input \"\(name)\" (inputs: \(inputNames))", sourceLocation)
            return nil
        }
        switch command.refusal(for: value) {
        case nil: return nil
        case .disabled(let reason)?: return reason
        case let refusal?: return refusal.message
        }
    }

    private func start(_ name: String, _ execute: (@escaping (CommandOutcome) -> Void) throws(InputError) -> CommandExecution) -> CommandRun {
        let run = CommandRun(name: name, test: group, timeout: timeout) { [weak self] in self?.recorder.flush() }
        defer { recorder.flush() }
        do throws(InputError) {
            run.execution = try execute { [weak run] outcome in run?.outcome = outcome }
            runs.append(run)
        } catch {
            run.refusal = error
        }
        return run
    }

    private var inputNames: String { context.inputs.map(\.name).joined(separator: ", ") }

    // MARK: Time and work

    /// Waits until the work this view-model started has run as far as it can without the clock
    /// or an answer of a stub (or ``timeout`` passed: a failure).
    public func settle(sourceLocation: SourceLocation = #_sourceLocation) async {
        if !(await EventLoop.shared.settle(group: group, within: timeout)) {
            fail("the view-model's work did not settle within \(timeout)", sourceLocation)
        }
        recorder.flush()
    }

    /// Moves the clock by `duration`, firing due timers in order, each followed by the work it released.
    public func advance(by duration: Duration) async {
        await clock.advance(by: duration, settling: group) { [recorder] in recorder.flush() }
    }

    /// ``advance(by:)`` in milliseconds.
    public func advance(ms: Int) async { await advance(by: .milliseconds(ms)) }

    /// Waits until `condition` holds, letting this view-model's work run; false, and a failure
    /// saying it waited for `what`, once ``timeout`` has passed.
    @discardableResult
    public func until(_ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            if ContinuousClock.now >= deadline {
                fail("waited \(timeout) for \(what)", sourceLocation)
                return false
            }
            await EventLoop.shared.settle(group: group, within: .milliseconds(50))
            await Task.yield()
        }
        await settle(sourceLocation: sourceLocation)
        return true
    }

    // MARK: Ending

    /// Ends the test: fails when output is left that nobody asserted, when a command or work still
    /// runs, when a command sent here has no outcome, when the clock holds a timer, or when a check
    /// of `also` fails (``StubCalls/verifyNothingPending(sourceLocation:)``). Then disposes the
    /// view-model and fails if anything still holds it (a closure that captured it).
    public func finish(also checks: [@HostActor (SourceLocation) -> Void] = [], sourceLocation: SourceLocation = #_sourceLocation) async {
        guard !finished else { return }
        finished = true
        await EventLoop.shared.settle(group: group, within: timeout)
        recorder.flush()
        if !records.isEmpty { fail("output nobody asserted: \(records.map(\.description).joined(separator: "; "))", sourceLocation) }
        let running = context.running
        if !running.isEmpty { fail("still running: \(running.joined(separator: ", "))", sourceLocation) }
        let open = runs.filter { $0.outcome == nil }.map(\.name)
        if !open.isEmpty { fail("commands sent with no outcome yet: \(open.joined(separator: ", "))", sourceLocation) }
        if clock.pendingCount > 0 { fail("timers still armed: \(clock.pendingCount)", sourceLocation) }
        for check in checks { check(sourceLocation) }
        let release = context.releaseCheck()
        TurnEnds.unregister(group)
        context.dispose()
        runs = []
        // The tasks that disposing cancelled unwind before the check (a task holds its view-model).
        _ = await until("the cancelled work to unwind", sourceLocation: sourceLocation) { !context.hasLiveTasks }
        if let problem = release.problem { fail(problem, sourceLocation) }
    }

    private func fail(_ problem: String, _ sourceLocation: SourceLocation) {
        Issue.record(Comment(rawValue: "\(VM.kind): \(problem)"), sourceLocation: sourceLocation)
    }

    // MARK: Records

    /// One output of the view-model, as it happened: a property's new value, or an event.
    ///
    /// Written by name and JSON (`.changed("page", 1)`), or typed through the view-model's members
    /// (`.changed(\.$page, 1)`, `.emitted(\.navigate, .productList)`), whose names and JSON the test
    /// works out.
    public struct Record: Equatable, CustomStringConvertible {
        enum Kind { case changed, event }
        enum Name {
            case named(String)
            case member(@HostActor (VM) -> String)
        }
        let kind: Kind
        let name: Name
        /// The property's new value, or the event's.
        public let value: JSON

        /// The output's name.
        package var outputName: String {
            if case .named(let name) = name { return name }
            return "?"
        }

        /// The property `name` took `value`.
        public static func changed(_ name: String, _ value: JSON) -> Record { Record(kind: .changed, name: .named(name), value: value) }

        /// The event `name` was emitted with `value`.
        public static func event(_ name: String, _ value: JSON) -> Record { Record(kind: .event, name: .named(name), value: value) }

        /// The property `property` (`\.$items`) took `value`.
        @HostActor
        public static func changed<Value: Encodable>(_ property: KeyPath<VM, Property<Value>>, _ value: Value) -> Record {
            Record(kind: .changed, name: .member { $0[keyPath: property].name }, value: JSONValueEncoder.encode(value))
        }

        /// The event `event` (`\.navigate`) was emitted with `value`.
        @HostActor
        public static func emitted<Value: Encodable>(_ event: KeyPath<VM, Event<Value>>, _ value: Value) -> Record {
            Record(kind: .event, name: .member { $0[keyPath: event].name }, value: JSONValueEncoder.encode(value))
        }

        /// The event `event` (`\.dismiss`), which carries no value, was emitted.
        @HostActor
        public static func emitted(_ event: KeyPath<VM, Event<NoValue>>) -> Record {
            emitted(event, NoValue())
        }

        /// The view-model's `error` event carried `error`.
        public static func failed(_ error: DomainError) -> Record { .event("error", error.json) }

        /// The record with its name worked out on `viewModel`.
        @HostActor
        func resolved(in viewModel: VM) -> Record {
            switch name {
            case .named: return self
            case .member(let name): return Record(kind: kind, name: .named(name(viewModel)), value: value)
            }
        }

        /// The same kind of record, of the same output, with the same value.
        public static func == (lhs: Record, rhs: Record) -> Bool {
            lhs.kind == rhs.kind && lhs.outputName == rhs.outputName && lhs.value == rhs.value
        }

        /// `changed name = value`, `event name value`.
        public var description: String {
            switch kind {
            case .changed: "changed \(outputName) = \(value)"
            case .event: "event \(outputName) \(value)"
            }
        }
    }
}

/// The observer of a view-model under test: its outputs as a client sees them.
///
/// Property changes are recorded as a host sends them: merged over a turn, each property once with
/// the value it ends with, in the order they first changed, and none that ends where it began; an
/// event is recorded after the changes made before it. A load that sets two fields records each
/// once, and a derived output that reads both records the value computed from both, not the one
/// computed between the two writes, which no client could see.
///
/// A host's turn ends when its work has run as far as it can (the loop has nothing left to run);
/// here, where the test sees that: after a send (a message), before an event, when the work
/// reaches a ``StubCalls`` call (it waits for the test's answer), in ``ViewModelTest/advance(by:)``
/// once the work pending settled and after each timer it fires and the work that released, and
/// where the test waits for
/// the work (``ViewModelTest/settle(sourceLocation:)``, ``ViewModelTest/until(_:sourceLocation:_:)``,
/// ``CommandRun/finished(sourceLocation:)``) or reads the history. These are points of the test's
/// own order, so a history is the same on every run, however the work's jobs interleave.
@HostActor
private final class Recorder<VM: ViewModel>: ViewModelContextObserver {
    private let record: (ViewModelTest<VM>.Record) -> Void
    /// The properties changed in this turn, in the order they first changed.
    private var pending: [any AnyProperty] = []
    /// Each property's value as last recorded (or as the view-model was made).
    private var shown: [ObjectIdentifier: JSON] = [:]

    init(_ record: @escaping (ViewModelTest<VM>.Record) -> Void) {
        self.record = record
    }

    /// Takes the values the view-model was made with as what a client saw first.
    func start(_ context: ViewModelContext) {
        for property in context.properties { shown[ObjectIdentifier(property)] = property.json }
    }

    func propertyDidChange(_ context: ViewModelContext, _ property: any AnyProperty) {
        for changed in pending where changed === property { return }
        pending.append(property)
    }

    func eventDidEmit(_ context: ViewModelContext, name: String, value: JSON) {
        flush()
        record(.event(name, value))
    }

    /// Ends the turn: records each property changed in it whose value differs from the one last recorded.
    func flush() {
        guard !pending.isEmpty else { return }
        let changed = pending
        pending.removeAll()
        for property in changed {
            let value = property.json
            let key = ObjectIdentifier(property)
            guard shown[key] != value else { continue }
            shown[key] = value
            record(.changed(property.name, value))
        }
    }
}

/// One send of a command from a test: its refusal, or its run and, once it ended, its outcome.
@HostActor
public final class CommandRun {
    /// The command's name.
    public let name: String
    /// Why the send was refused, if it was (then it has no outcome, ever).
    public internal(set) var refusal: InputError?
    /// How the run ended; nil while it runs (or when refused).
    public internal(set) var outcome: CommandOutcome?
    var execution: CommandExecution?
    private let group: WorkGroup
    private let timeout: Duration
    /// Ends the test's turn (records what the run changed), once the run has ended.
    private let endTurn: @HostActor () -> Void

    init(name: String, test group: WorkGroup, timeout: Duration, endTurn: @escaping @HostActor () -> Void) {
        self.name = name
        self.group = group
        self.timeout = timeout
        self.endTurn = endTurn
    }

    /// The reply's `value` of a run that succeeded with one.
    public var value: JSON? {
        if case .succeeded(let value)? = outcome { return value }
        return nil
    }

    /// Cancels the run, as `$/cancelRequest` does.
    public func cancel() { execution?.cancel() }

    /// Waits until the run has ended and answers how; nil, and a failure, when the send was refused
    /// or the run has not ended within the test's timeout.
    @discardableResult
    public func finished(sourceLocation: SourceLocation = #_sourceLocation) async -> CommandOutcome? {
        if let refusal {
            Issue.record(Comment(rawValue: "\(name) was refused (\(refusal.message)): it has no outcome"), sourceLocation: sourceLocation)
            return nil
        }
        let deadline = ContinuousClock.now + timeout
        while outcome == nil {
            if ContinuousClock.now >= deadline {
                Issue.record(Comment(rawValue: "waited \(timeout) for \(name) to end"), sourceLocation: sourceLocation)
                return nil
            }
            await EventLoop.shared.settle(group: group, within: .milliseconds(50))
            await Task.yield()
        }
        await EventLoop.shared.settle(group: group, within: timeout)
        endTurn()
        return outcome
    }
}

/// Where the work of a test's view-model stops to wait for the test (a ``StubCalls`` call): the
/// end of a turn, as a host's loop running out of work is. Keyed by the test's work group, so that
/// tests running side by side end only their own turns.
@HostActor
enum TurnEnds {
    private static var ends: [ObjectIdentifier: () -> Void] = [:]

    static func register(_ group: WorkGroup, _ end: @escaping () -> Void) { ends[ObjectIdentifier(group)] = end }

    static func unregister(_ group: WorkGroup) { ends[ObjectIdentifier(group)] = nil }

    /// Ends the turn of the test whose work runs now, if any.
    static func reached() {
        guard let group = WorkGroup.current else { return }
        ends[ObjectIdentifier(group)]?()
    }
}
