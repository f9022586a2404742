import VMHostEventLoop
import VMHostWire

/// What the host is told about a view-model's outputs as they change.
@HostActor
public protocol ViewModelContextObserver: AnyObject {
    func propertyDidChange(_ context: ViewModelContext, _ property: any AnyProperty)
    func eventDidEmit(_ context: ViewModelContext, name: String, value: JSON)
}

/// The runtime side of one view-model: its declared inputs and outputs, its `error` channel, its
/// activity counter, its timers, its clock and locale, and its lifetime.
///
/// A view-model declares its members through the context, once, in its initializer; the host reads
/// names, kinds and schemas from here for `host.describe`, `vm.send` and `vm.subscribe`.
///
/// ```swift
/// init(args: Args, context: ViewModelContext) {
///     items = context.property("items", [ProductCell]())
///     ...                                     // every stored property set: phase 2
///     let refresh = context.command("refresh", policy: .latest) { [unowned self] _ in try await load(page: 1) }
///     isRefreshing.bind(to: refresh.isExecuting)
/// }
/// ```
@HostActor
public final class ViewModelContext {
    /// The view-model's handle (`vm` on the wire).
    public let handle: String
    public let kind: String
    public let clock: any HostClock
    public let locale: AppLocale
    /// The merged error channel: every failed command emits here once (the `error` event).
    public let error: Event<DomainError>
    public let activity = ActivityCounter()

    public private(set) var properties: [any AnyProperty] = []
    public private(set) var events: [any AnyEvent] = []
    public private(set) var inputs: [any AnyInput] = []
    private var commands: [any AnyCommand] = []
    private var timers: [UInt64: ClockTimer] = [:]
    private var nextTimerToken: UInt64 = 0
    private var disposeHandlers: [() -> Void] = []

    public weak var observer: (any ViewModelContextObserver)?
    /// Finds another view-model of the same host by handle (for a child that reloads its parent).
    public var lookup: (String) -> AnyObject? = { _ in nil }
    public private(set) var isDisposed = false

    /// The view-model this context belongs to, held while it may still run code: until disposed,
    /// and after that until the last command task has unwound. View-model closures capture
    /// `unowned self`; this is what makes that safe when a cancelled task finishes late.
    private var instance: AnyObject?
    private var liveTasks = 0

    public init(handle: String, kind: String, clock: any HostClock, locale: AppLocale) {
        self.handle = handle
        self.kind = kind
        self.clock = clock
        self.locale = locale
        error = Event("error")
        error.owner = self
        events.append(error)
    }

    // MARK: Declaring outputs

    /// Declares a property output.
    public func property<Value>(_ name: String, _ initial: Value, schema: JSON? = nil) -> Property<Value> {
        let property = Property(name, initial, schema: schema)
        property.owner = self
        property.position = properties.count
        properties.append(property)
        return property
    }

    /// Declares an event output.
    public func event<Value>(_ name: String, of type: Value.Type = Value.self, schema: JSON? = nil) -> Event<Value> {
        let event = Event<Value>(name, schema: schema)
        event.owner = self
        events.append(event)
        return event
    }

    // MARK: Declaring inputs

    /// Declares a value input; `apply` runs with each decoded value. A `secret` input (a password,
    /// a code) has its values masked wherever messages are recorded (the trace, the logs).
    @discardableResult
    public func value<Value: JSONDecodable & JSONEncodable>(
        _ name: String, of type: Value.Type = Value.self, schema: JSON? = nil, secret: Bool = false,
        _ apply: @escaping (Value) -> Void
    ) -> ValueInput<Value> {
        let input = ValueInput<Value>(name: name, schema: schema, secret: secret, apply: apply)
        inputs.append(input)
        return input
    }

    /// Declares a trigger without a value.
    @discardableResult
    public func trigger(_ name: String, _ fire: @escaping () throws(InputError) -> Void) -> Trigger<NoValue> {
        trigger(name, of: NoValue.self) { (_: NoValue) throws(InputError) in try fire() }
    }

    /// Declares a trigger that carries a value.
    @discardableResult
    public func trigger<Value: JSONDecodable>(
        _ name: String, of type: Value.Type, schema: JSON? = nil, _ fire: @escaping (Value) throws(InputError) -> Void
    ) -> Trigger<Value> {
        let input = Trigger<Value>(name: name, schema: schema, fire: fire)
        inputs.append(input)
        return input
    }

    /// Declares a command without a value.
    @discardableResult
    public func command(
        _ name: String, policy: CommandPolicy, _ body: @escaping @HostActor () async throws -> JSON?
    ) -> Command<NoValue> {
        command(name, of: NoValue.self, policy: policy) { _ in try await body() }
    }

    /// Declares a command that carries a value.
    @discardableResult
    public func command<Value: JSONDecodable & Sendable>(
        _ name: String, of type: Value.Type, schema: JSON? = nil, policy: CommandPolicy,
        _ body: @escaping @HostActor (Value) async throws -> JSON?
    ) -> Command<Value> {
        let command = Command<Value>(name: name, schema: schema, policy: policy, body: body)
        command.owner = self
        inputs.append(command)
        commands.append(command)
        return command
    }

    /// Called once the view-model is built: the lists of its members are trimmed to their size
    /// (they grew by doubling), since the host keeps thousands of view-models.
    public func endDeclarations() {
        properties = properties.map { $0 }
        events = events.map { $0 }
        inputs = inputs.map { $0 }
        commands = commands.map { $0 }
    }

    // MARK: Lifetime

    /// Keeps `instance` alive for as long as this context may run its code (see ``dispose()``).
    public func retain(_ instance: AnyObject) {
        self.instance = instance
    }

    func taskStarted() { liveTasks += 1 }

    func taskEnded() {
        liveTasks -= 1
        if isDisposed && liveTasks == 0 { instance = nil }
    }

    // MARK: Lookup

    public func property(named name: String) -> (any AnyProperty)? { properties.first { $0.name == name } }
    public func event(named name: String) -> (any AnyEvent)? { events.first { $0.name == name } }
    public func input(named name: String) -> (any AnyInput)? { inputs.first { $0.name == name } }

    // MARK: Work

    /// Runs one backend call as part of a command: counted by ``activity`` while in flight, and
    /// followed by a cancellation check, so that a cancelled command applies nothing it awaited.
    public func perform<T>(_ operation: @HostActor () async throws -> T) async throws -> T {
        let result = try await activity.track(operation)
        try Task.checkCancellation()
        return result
    }

    /// Runs `action` after `delay` on the host's clock, unless the view-model is disposed first.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @HostActor () -> Void) -> ClockTimer {
        nextTimerToken += 1
        let token = nextTimerToken
        let timer = clock.schedule(after: delay) { [weak self] in
            guard let self, !self.isDisposed else { return }
            self.timers[token] = nil
            action()
        }
        timers[token] = timer
        return timer
    }

    /// Cancels a timer made with ``schedule(after:_:)``.
    public func cancel(_ timer: ClockTimer) {
        if let token = timers.first(where: { $0.value == timer })?.key { timers[token] = nil }
        clock.cancel(timer)
    }

    /// Runs `handler` when the view-model is disposed.
    public func onDispose(_ handler: @escaping () -> Void) {
        disposeHandlers.append(handler)
    }

    /// Ends the view-model: cancels every command execution (their callers get -32800), every timer,
    /// and runs dispose handlers. Outputs stop reaching the host.
    public func dispose() {
        guard !isDisposed else { return }
        isDisposed = true
        for command in commands { command.cancelAll() }
        for timer in timers.values { clock.cancel(timer) }
        timers.removeAll()
        for handler in disposeHandlers { handler() }
        disposeHandlers.removeAll()
        observer = nil
        if liveTasks == 0 { instance = nil }
    }

    // MARK: From outputs

    func propertyDidChange(_ property: any AnyProperty) {
        observer?.propertyDidChange(self, property)
    }

    func eventDidEmit(name: String, value: JSON) {
        observer?.eventDidEmit(self, name: name, value: value)
    }
}
