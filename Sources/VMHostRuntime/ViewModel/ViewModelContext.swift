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
///     self.context = context
///     items = context.property("items", [ProductCell]())
///     ...                                     // every stored property set: phase 2
///     let refresh = context.command("refresh", policy: .latest) { [unowned self] in try await load(page: 1); return nil }
///     isRefreshing.bind(to: refresh.isExecuting)
/// }
/// ```
///
/// Closures given to the context (command bodies, triggers, `disabledReason`, observers) are kept by
/// the context's members: capture the view-model `[unowned self]` and reach the context as
/// `self.context` (or `[unowned context]`). A closure that captures the initializer's `context`
/// parameter or `self` strongly is a cycle that outlives `vm.dispose`; in debug builds the host
/// stops on it with an assertion naming the kind (see ``checkReleased(_:)``).
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

    /// True for the context `host.describe` builds an instance in to read its declarations: its
    /// clock is its own (timers never fire), and commands refuse to start.
    public let isDescribing: Bool
    public weak var observer: (any ViewModelContextObserver)?
    /// Finds another view-model of the same host by handle (for a child that reloads its parent).
    public var lookup: (String) -> AnyObject? = { _ in nil }
    public private(set) var isDisposed = false

    /// The view-model this context belongs to, held while it may still run code: until disposed,
    /// and after that until the last command task has unwound. View-model closures capture
    /// `unowned self`; this is what makes that safe when a cancelled task finishes late.
    private var instance: AnyObject?
    private var liveTasks = 0

    public convenience init(handle: String, kind: String, clock: any HostClock, locale: AppLocale) {
        self.init(handle: handle, kind: kind, clock: clock, locale: locale, describing: false)
    }

    init(handle: String, kind: String, clock: any HostClock, locale: AppLocale, describing: Bool) {
        self.handle = handle
        self.kind = kind
        self.clock = clock
        self.locale = locale
        self.isDescribing = describing
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

    /// Declares a value input; `apply` runs with each decoded value. `schema` refines the value
    /// type's schema (a `minLength`, an `enum`); it must describe the same values the type reads.
    /// A `secret` input (a password, a code) has its values masked wherever messages are recorded
    /// (the trace, the logs).
    @discardableResult
    public func value<Value: InputValue>(
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

    /// Declares a trigger that carries a value; `host.describe` reports `Value`'s schema unless
    /// `schema` refines it. `fire` may refuse with ``InputError/refused(_:_:)`` (-32602) or
    /// ``InputError/disabled(reason:)`` (-32003).
    @discardableResult
    public func trigger<Value: InputValue>(
        _ name: String, of type: Value.Type, schema: JSON? = nil, _ fire: @escaping (Value) throws(InputError) -> Void
    ) -> Trigger<Value> {
        let input = Trigger<Value>(name: name, schema: schema, fire: fire)
        inputs.append(input)
        return input
    }

    /// Declares a command without a value.
    @discardableResult
    public func command(
        _ name: String, policy: CommandPolicy<NoValue>, _ body: @escaping @HostActor () async throws -> JSON?
    ) -> Command<NoValue> {
        command(name, of: NoValue.self, policy: policy) { _ in try await body() }
    }

    /// Declares a command that carries a value; `host.describe` reports `Value`'s schema unless
    /// `schema` refines it. A well-formed value that is wrong now is refused before the command
    /// starts, in ``Command/check`` (-32602); a command that cannot run now, in ``Command/disabledReason`` (-32003).
    @discardableResult
    public func command<Value: InputValue & Sendable>(
        _ name: String, of type: Value.Type, schema: JSON? = nil, policy: CommandPolicy<Value>,
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

    /// True while a task of one of its commands has not unwound yet (a cancelled one may finish late).
    public var hasLiveTasks: Bool { liveTasks > 0 }

    /// A check, for once the owner of a disposed context has dropped it, that the context and its
    /// view-model are gone: see ``ReleaseCheck``.
    public func releaseCheck() -> ReleaseCheck {
        ReleaseCheck(context: self, instance: instance, skip: liveTasks > 0)
    }

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

/// Catches, in debug builds, the mistake that makes a view-model outlive `vm.dispose`: a closure
/// declared on its context that captures `self` or the initializer's `context` parameter strongly.
///
/// Taken with ``ViewModelContext/releaseCheck()`` once the context is disposed, and ``verify()``d
/// once its owner dropped every reference (the host does both in `vm.dispose`). Skipped while a
/// command's task still unwinds, since that task holds the view-model until it ends.
@HostActor
public struct ReleaseCheck {
    private weak var context: ViewModelContext?
    private weak var instance: AnyObject?
    private let kind: String
    private let handle: String
    private let skip: Bool

    init(context: ViewModelContext, instance: AnyObject?, skip: Bool) {
        self.context = context
        self.instance = instance
        self.kind = context.kind
        self.handle = context.handle
        self.skip = skip
    }

    /// The problem found, or nil when the context and its view-model were released (or the check was skipped).
    public var problem: String? {
        guard !skip, context != nil || instance != nil else { return nil }
        return "\(kind) \(handle) outlived its disposal: a closure declared on its context holds it. "
            + "Capture the view-model [unowned self] and use self.context (or [unowned context]) inside "
            + "command bodies, triggers, disabledReason and observers, never the initializer's context parameter"
    }

    /// In debug builds, stops with ``problem`` when the context or its view-model is still alive;
    /// release builds do nothing.
    public func verify() {
        #if DEBUG
        if let problem { assertionFailure(problem) }
        #endif
    }
}
