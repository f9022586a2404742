import VMHostEventLoop
import VMHostWire

/// What the host is told about a view-model's outputs as they change.
@HostActor
package protocol ViewModelContextObserver: AnyObject {
    /// `property` of `context` changed.
    func propertyDidChange(_ context: ViewModelContext, _ property: any AnyProperty)
    /// `context` emitted the event `name` with `value`.
    func eventDidEmit(_ context: ViewModelContext, name: String, value: JSON)
}

/// The runtime side of one view-model: its handle, clock and locale, its declared inputs and
/// outputs, its `error` channel, its activity, its timers and its lifetime.
///
/// A kind never makes one: the host (or the test kit) makes the context, builds the view-model
/// inside it, and binds the members the view-model's stored properties declare. A view-model
/// reaches its context as `context` (``ViewModel/context``): `vm.context.locale`,
/// `vm.context.handle`, `vm.context.viewModel(parent, as: ListViewModel.self)`.
@HostActor
public final class ViewModelContext {
    /// The view-model's handle (`vm` on the wire).
    public let handle: String
    /// The kind's name.
    package let kind: String
    /// The host's clock: every timer, latency and deadline goes through it.
    public let clock: any HostClock
    /// The language of the view-model's display strings.
    public let locale: AppLocale
    /// The merged error channel: every failed command (and work) emits here once (the `error` event).
    package let error: Event<DomainError>
    let activity = ActivityCounter()

    /// The property outputs, in declaration order.
    package private(set) var properties: [any AnyProperty] = []
    /// The events, `error` first.
    package private(set) var events: [any AnyEvent] = []
    /// The inputs, in declaration order.
    package private(set) var inputs: [any AnyInput] = []
    /// The members made while the view-model was built, in the order they were made.
    private var adopted: [any DeclaredMember] = []
    /// The members found in the view-model's stored properties, in declaration order.
    private var members: [any DeclaredMember] = []
    private var timers: [UInt64: ClockTimer] = [:]
    private var nextTimerToken: UInt64 = 0
    private var disposeHandlers: [() -> Void] = []
    /// Work asked for before the view-model was bound (by its initializer): run once it is.
    private var whenBound: [() -> Void] = []
    private(set) var isBound = false

    /// True for the context `host.describe` builds an instance in to read its declarations: its
    /// clock is its own (timers never fire), and commands and work refuse to start.
    package let isDescribing: Bool
    /// Told of every change and emission (the host, or the test kit's recorder).
    package weak var observer: (any ViewModelContextObserver)?
    /// Whether the observer keeps the changes of the outputs (the host: while the view-model has a
    /// subscription); the observer sets it.
    package var isObserved = false
    /// The group the tasks of its commands and works belong to: set by the test kit, which settles
    /// on this view-model's work only.
    package var workGroup: WorkGroup?
    /// Finds another view-model of the same host by handle.
    package var lookup: (String) -> AnyObject? = { _ in nil }
    /// Whether ``dispose()`` ended it.
    package private(set) var isDisposed = false
    /// Whether the view-model is disposed because the server stops and keeps its session to be
    /// made again after the restart (``Restorable``): what the kind keeps elsewhere for it (a
    /// login in the app's store) stays. Read in an ``onDispose(_:)`` handler.
    public package(set) var isKeptForRestart = false

    /// The view-model, held while it may still run code: until disposed, and after that until its
    /// last task has unwound.
    private var instance: AnyObject?
    private var liveTasks = 0

    /// A context for a view-model `handle` of `kind`; `describing` for the one `host.describe` reads.
    package init(handle: String, kind: String, clock: any HostClock, locale: AppLocale, describing: Bool = false) {
        self.handle = handle
        self.kind = kind
        self.clock = clock
        self.locale = locale
        self.isDescribing = describing
        error = Event(name: "error")
        error.owner = self
        events.append(error)
    }

    /// True while a command or work of the view-model runs (its activity, SPEC §6). Reading it in
    /// a `@Derived` output makes it a source: `@Derived({ $0.context.isBusy }) var loading: Bool`.
    public var isBusy: Bool { activity.isActive.value }

    /// The view-model of this host named `handle`, if it is one of `type`.
    public func viewModel<VM: AnyObject>(_ handle: String, as type: VM.Type = VM.self) -> VM? {
        lookup(handle) as? VM
    }

    // MARK: Building

    /// The context whose view-model is being built now: members made meanwhile belong to it.
    static var declaring: ViewModelContext?

    /// Builds a view-model in this context: `make` runs with members adopted by it, then the
    /// view-model's stored properties name them (its declaration order is the order of
    /// `host.describe`), derived outputs compute, and work its initializer asked for starts.
    package func build<VM: AnyObject>(_ make: () throws -> VM) rethrows -> VM {
        let outer = Self.declaring
        Self.declaring = self
        let instance: VM
        do {
            defer { Self.declaring = outer }
            instance = try make()
        }
        bind(instance)
        return instance
    }

    func adopt(_ member: any DeclaredMember) {
        adopted.append(member)
    }

    /// Names and declares the members the view-model's stored properties hold (``MemberLayout``:
    /// where they sit is found once per kind), then starts them. Loops, not closures handed to the
    /// standard library: each such closure checks at run time that it runs on the host actor.
    private func bind(_ instance: AnyObject) {
        self.instance = instance
        ViewModelContexts.register(self, for: instance)
        let type: AnyObject.Type = Swift.type(of: instance)
        let layout = MemberLayout.of(type, kind: kind)
        if let declared = layout.declared {
            properties.reserveCapacity(declared.properties)
            events.reserveCapacity(declared.events)
            inputs.reserveCapacity(declared.inputs)
        }
        var found: [any DeclaredMember] = []
        found.reserveCapacity(layout.slots.count)
        let base = UnsafeRawPointer(Unmanaged.passUnretained(instance).toOpaque())
        slots: for slot in layout.slots {
            let member = slot.read(base)
            // A member held by two stored properties is named by the first.
            for other in found where other === member { continue slots }
            found.append(member)
            member.bind(name: slot.name, owner: instance, context: self)
        }
        if let stray = Self.firstStray(adopted, found) {
            fatalError(Self.strayProblem(stray, kind: kind, instance: instance))
        }
        if layout.declared == nil { MemberLayout.record(type, declared: (properties.count, events.count, inputs.count)) }
        members = found
        adopted = []
        isBound = true
        for member in members { member.start(context: self) }
        let pending = whenBound
        whenBound = []
        for action in pending { action() }
    }

    /// The first of `adopted` (the members made while the view-model was built) that no stored
    /// property holds. Both lists are usually in the same order: checked pairwise first.
    private static func firstStray(_ adopted: [any DeclaredMember], _ found: [any DeclaredMember]) -> (any DeclaredMember)? {
        var index = 0
        while index < adopted.count, index < found.count, adopted[index] === found[index] { index += 1 }
        guard index < adopted.count else { return nil }
        var held = Set<ObjectIdentifier>()
        for member in found { held.insert(ObjectIdentifier(member)) }
        for member in adopted[index...] where !held.contains(ObjectIdentifier(member)) { return member }
        return nil
    }

    /// Why `stray` stops the binding: what it is, and where the view-model holds it, if it does
    /// (in an array, an optional, a struct, a property of another type).
    private static func strayProblem(_ stray: any DeclaredMember, kind: String, instance: AnyObject) -> String {
        let what = "a member made while building the view-model (\(Swift.type(of: stray)))"
        let rule = "declare each input, output and work as a stored property of its own type (`let retry = Command(…)`, `@Input var query = \"\"`)"
        if let found = path(to: stray, in: Mirror(reflecting: instance), depth: 3) {
            let path = found.dropFirst()
            return "\(kind).\(path): \(what) is held by `\(path)`, not by a stored property of its own type: \(rule)"
        }
        return "\(kind): \(what) is held by no stored property of the view-model (made in the initializer and dropped, or kept "
            + "outside it): \(rule)"
    }

    /// Where `member` is inside the values `mirror` reflects (`.retry`, `.helpers[0]`,
    /// `.pair.1`), searched `depth` levels deep; a class's superclasses' properties included.
    private static func path(to member: AnyObject, in mirror: Mirror, depth: Int) -> String? {
        var offset = 0
        for child in mirror.children {
            let step: String
            switch mirror.displayStyle {
            case .optional?: step = ""
            case .collection?, .set?, .dictionary?: step = "[\(offset)]"
            default: step = "." + (child.label ?? "\(offset)")
            }
            offset += 1
            if child.value as AnyObject === member { return step }
            if depth > 1, let rest = path(to: member, in: Mirror(reflecting: child.value), depth: depth - 1) { return step + rest }
        }
        if let superclass = mirror.superclassMirror { return path(to: member, in: superclass, depth: depth) }
        return nil
    }

    /// Runs `action` once the view-model is bound (at once if it is).
    func afterBinding(_ action: @escaping () -> Void) {
        if isBound { action() } else { whenBound.append(action) }
    }

    // MARK: Declaring (from members, while binding)

    func declareOutput<Value: Encodable>(_ property: Property<Value>) {
        property.owner = self
        property.asOutput = property
        property.position = properties.count
        properties.append(property)
    }

    func declareEvent(_ event: any AnyEvent) {
        events.append(event)
    }

    func declareInput(_ input: any AnyInput) {
        inputs.append(input)
    }

    // MARK: Lookup

    /// The view-model, until it is released (the test kit reads it through here, so that it holds
    /// it no longer than the host would).
    package var viewModel: AnyObject? { instance }

    /// Sets the value input whose value `property` holds to `value`, as a send of it would; false
    /// when no value input of this view-model holds it.
    package func setInput<Value: InputValue>(_ property: Property<Value>, to value: Value) -> Bool {
        for case let input as InputMember<Value> in inputs where input.state === property {
            input.apply(value)
            return true
        }
        return false
    }

    /// The commands and works with a run in flight, by name.
    package var running: [String] {
        members.compactMap { ($0 as? any RunningMember).flatMap { $0.isBusy ? $0.memberName : nil } }
    }

    // Loops, not `first(where:)`: a closure handed to the standard library checks at run time
    // that it runs on the host actor, on every call (a `vm.send` looks its input up).

    /// The property output `name`, if any.
    package func property(named name: String) -> (any AnyProperty)? {
        for property in properties where property.name == name { return property }
        return nil
    }
    /// The event `name`, if any.
    package func event(named name: String) -> (any AnyEvent)? {
        for event in events where event.name == name { return event }
        return nil
    }
    /// The input `name`, if any.
    package func input(named name: String) -> (any AnyInput)? {
        for input in inputs where input.name == name { return input }
        return nil
    }

    // MARK: Lifetime

    func taskStarted() { liveTasks += 1 }

    func taskEnded() {
        liveTasks -= 1
        if isDisposed && liveTasks == 0 { release() }
    }

    /// True while a task of one of its commands or works has not unwound yet (a cancelled one may finish late).
    package var hasLiveTasks: Bool { liveTasks > 0 }

    /// A check, for once the owner of a disposed context has dropped it, that the context and its
    /// view-model are gone: see ``ReleaseCheck``.
    package func releaseCheck() -> ReleaseCheck {
        ReleaseCheck(context: self, instance: instance, skip: liveTasks > 0)
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

    /// The timers armed and not fired.
    package var armedTimerCount: Int { timers.count }

    /// Runs `handler` when the view-model is disposed.
    public func onDispose(_ handler: @escaping () -> Void) {
        disposeHandlers.append(handler)
    }

    /// Ends the view-model: cancels every run of its commands and works (their callers get -32800),
    /// every timer, runs the dispose handlers, and lets go of what its members hold. Outputs stop
    /// reaching the host.
    package func dispose() {
        guard !isDisposed else { return }
        isDisposed = true
        for member in members { member.cancelRuns() }
        for timer in timers.values { clock.cancel(timer) }
        timers.removeAll()
        for handler in disposeHandlers { handler() }
        disposeHandlers.removeAll()
        whenBound.removeAll()
        observer = nil
        lookup = { _ in nil }
        for member in members { member.tearDown() }
        if liveTasks == 0 { release() }
    }

    private func release() {
        if let instance { ViewModelContexts.unregister(instance) }
        instance = nil
    }

    // MARK: From outputs

    func propertyDidChange(_ property: any AnyProperty) {
        observer?.propertyDidChange(self, property)
    }

    func eventDidEmit(name: String, value: JSON) {
        observer?.eventDidEmit(self, name: name, value: value)
    }
}

/// The context of each view-model built and not released, by the view-model's identity: what
/// ``ViewModel/context`` reads.
@HostActor
enum ViewModelContexts {
    private static var byInstance: [ObjectIdentifier: ViewModelContext] = [:]

    static func register(_ context: ViewModelContext, for instance: AnyObject) {
        byInstance[ObjectIdentifier(instance)] = context
    }

    static func unregister(_ instance: AnyObject) {
        byInstance[ObjectIdentifier(instance)] = nil
    }

    static func context(of instance: AnyObject) -> ViewModelContext? {
        byInstance[ObjectIdentifier(instance)]
    }
}

/// A member of a view-model declared by one of its stored properties (an output, an input, a
/// command, a work): made while the view-model is built, named and bound once it is.
@HostActor
protocol DeclaredMember: AnyObject {
    /// Names the member after its stored property, and declares it in `context`.
    func bind(name: String, owner: AnyObject, context: ViewModelContext)
    /// Runs once every member is bound (a derived output computes its first value).
    func start(context: ViewModelContext)
    /// Cancels what runs (the view-model is being disposed).
    func cancelRuns()
    /// Lets go of closures and observers once the view-model is disposed.
    func tearDown()
}

extension DeclaredMember {
    func start(context: ViewModelContext) {}
    func cancelRuns() {}
    func tearDown() {}
}

/// A property wrapper whose storage is a ``DeclaredMember``.
@HostActor
protocol DeclaredMemberWrapper {
    var declaredMember: any DeclaredMember { get }
}

/// Catches the mistake that makes a view-model outlive `vm.dispose`: something outside the
/// view-model (a closure handed to a service, an observer of a shared object) that holds it.
///
/// Taken with ``ViewModelContext/releaseCheck()`` once the context is disposed, and read once its
/// owner dropped every reference (the host and the test kit do both). Skipped while a run's task
/// still unwinds, since that task holds the view-model until it ends.
@HostActor
package struct ReleaseCheck {
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

    /// The problem found, or nil when the view-model was released (or the check was skipped).
    package var problem: String? {
        guard !skip, instance != nil else { return nil }
        return "\(kind) \(handle) outlived its disposal: something still holds it (a closure that captures the view-model "
            + "instead of taking it as its parameter, or an observer of a shared object not ended in onDispose)"
    }

    /// In debug builds, stops with ``problem`` when the view-model is still alive; release builds
    /// do nothing.
    package func verify() {
        #if DEBUG
        if let problem { assertionFailure(problem) }
        #endif
    }
}

/// A command or work, seen by the test kit: whether a run is in flight.
@HostActor
protocol RunningMember {
    var memberName: String { get }
    var isBusy: Bool { get }
}

extension ViewModelCommand: RunningMember {
    var memberName: String { name }
    var isBusy: Bool { !runs.running.isEmpty }
}

extension ViewModelWork: RunningMember {
    var memberName: String { name }
    var isBusy: Bool { !runs.running.isEmpty }
}
