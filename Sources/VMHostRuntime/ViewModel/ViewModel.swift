import VMHostEventLoop
import VMHostWire

/// A view-model kind: a class whose stored properties declare its inputs and outputs, each once,
/// named by the property.
///
/// ```swift
/// @HostActor
/// final class SearchViewModel: ViewModel {
///     static let kind = "Search"
///
///     @Input var query = ""                                   // a value input
///     @Output var articles: [Article] = []                    // a property output
///     let loads = Loads(tracking: \.search, emptyWhen: \.articles.isEmpty)   // loadState, lastError
///     let retry = Command(.latest) { vm in vm.search.run(vm.query) }        // a command input
///     let search = Work(.latest) { (vm, query: String) in try await vm.find(query) }   // work no client sees
///
///     private let api: any ArticleAPI
///     init(api: any ArticleAPI) {
///         self.api = api
///         $query.debounce(for: .milliseconds(300)).removeDuplicates().run(search)
///     }
/// }
/// ```
///
/// The members are ``Output`` (`@Output`), ``Input`` (`@Input`), ``Field`` (`@Field`: an input
/// shown back as an output), ``DerivedOutput`` (`@Derived`), ``Event``, and, bound to the kind by
/// the aliases below, ``Command``, ``Trigger``, ``Work`` and ``Loads``. The closures they take are
/// handed the view-model as their first parameter: none captures it, so nothing a kind declares
/// can keep it alive after `vm.dispose`. `host.describe` lists the members in declaration order
/// (the `error` event first among the events).
///
/// A kind is made by the host through its ``ViewModelFactory`` (or by the test kit), never
/// directly: the members are named and started once the initializer has returned.
///
/// The member rules (checked at the first instance of a kind, which stops with a message naming
/// the kind and the member when one is broken):
/// - Swift visibility does not hide a member from the wire: `@Input private var code = ""` is an
///   input any client may send to, and `host.describe` lists it. State no client may see is
///   `@Tracked` or a plain stored property.
/// - A member is a stored property of its own type (`let retry = Command(…)`, `@Output var page =
///   0`), not `lazy`, not optional, not an element of an array or a member of a struct.
/// - A superclass's members are bound too, before the kind's own.
@HostActor
public protocol ViewModel: AnyObject {
    /// What `vm.create {kind, args}` carries; ``NoArgs`` unless the kind says otherwise.
    associatedtype Args: ViewModelArgs = NoArgs
    /// The kind's name on the wire (`ProductList`).
    static var kind: String { get }
}

extension ViewModel {
    /// A command input of this kind (`vm.send` runs it and answers when it ends).
    public typealias Command<Value: InputValue & Sendable, Result> = ViewModelCommand<Self, Value, Result>
    /// A trigger input of this kind (`vm.send` fires it and answers at once).
    public typealias Trigger<Value: InputValue> = ViewModelTrigger<Self, Value>
    /// Work of this kind that no input starts: the same policies, cancellation and activity as a
    /// command, invisible on the wire.
    public typealias Work<Value: Sendable> = ViewModelWork<Self, Value>
    /// A stream the kind consumes for as long as it lives: started with the view-model, cancelled
    /// at its dispose, its errors reported once on `error`.
    public typealias Listening = ViewModelListening<Self>
    /// A property output computed from the kind's other values.
    public typealias Derived<Value: Equatable & Codable> = DerivedOutput<Self, Value>
    /// The `loadState` and `lastError` outputs of the kind's loads.
    public typealias Loads = LoadTracker<Self>

    /// The view-model's context: its handle, clock, locale and the other view-models of its host.
    ///
    /// - Important: Only for a view-model the host or the test kit built, until it is disposed and
    ///   released.
    public var context: ViewModelContext {
        // While its initializer runs, a view-model's context is the one building it.
        guard let context = ViewModelContexts.context(of: self) ?? ViewModelContext.declaring else {
            preconditionFailure("\(Self.kind): the view-model has no context: it was not built by a host or the test kit, or it was released")
        }
        return context
    }

    /// Calls `action` with the view-model and the new value after every change of `property`, in
    /// the turn of the change.
    public func observe<Value>(_ property: Property<Value>, _ action: @escaping @HostActor (Self, Value) -> Void) {
        property.observe { [weak self] value in
            guard let self else { return }
            action(self, value)
        }
    }

    /// Calls `action` with the view-model after every change of any of `properties`.
    public func observe(_ properties: any ObservableProperty..., action: @escaping @HostActor (Self) -> Void) {
        for property in properties {
            property.onChange { [weak self] in
                guard let self else { return }
                action(self)
            }
        }
    }

    /// Runs `action` with the view-model after `delay` on the host's clock, unless it is disposed first.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @HostActor (Self) -> Void) -> ClockTimer {
        context.schedule(after: delay) { [weak self] in
            guard let self else { return }
            action(self)
        }
    }
}

/// A property seen without its value type, to observe its changes.
@HostActor
public protocol ObservableProperty: AnyObject {
    /// Calls `handler` after every change.
    func onChange(_ handler: @escaping () -> Void)
}

extension Property: ObservableProperty {
    /// Calls `handler` after every change of the value.
    public func onChange(_ handler: @escaping () -> Void) { observe { _ in handler() } }
}

/// The arguments of a view-model kind (`vm.create {kind, args}`), declared once by the reads of
/// their initializer (an ``ObjectValue``).
///
/// From those reads come the schema `host.describe` reports, the refusal of members not read, the
/// errors that name the argument (`params.args.pageSize: must be between 1 and 100, got 0`) and the
/// ``placeholder`` that `describe` instantiates the kind with:
///
/// ```swift
/// struct Args: ViewModelArgs {
///     var listId: String
///     var pageSize: Int
///     init(reader: ObjectReader) throws(JSONDecodingError) {
///         listId = try reader.required("listId", .nonEmpty)
///         pageSize = try reader.optional("pageSize", .in(1...100), default: 20)
///     }
/// }
/// ```
public protocol ViewModelArgs: ObjectValue, Sendable {
    /// Some valid arguments: used once to instantiate the kind and read its declared members.
    /// By default, what the reads answer while their schema is recorded: each member's default,
    /// nil for an optional one, the smallest valid value of a required one.
    static var placeholder: Self { get }
}

extension ViewModelArgs {
    /// The args made of the placeholders the reads answer while recording.
    public static var placeholder: Self { recorded().instance }
}

/// Arguments of a kind that takes none: `{}`, and any member is refused.
public struct NoArgs: ViewModelArgs {
    /// No arguments.
    public init() {}
    /// Reads nothing: the declaration of no member.
    public init(reader: ObjectReader) {}
}

/// How the host makes view-models of one kind: its name, its args and a constructor with the
/// kind's dependencies.
///
/// ```swift
/// static func factory(api: any ArticleAPI) -> ViewModelFactory {
///     ViewModelFactory { (_: NoArgs) in SearchViewModel(api: api) }
/// }
/// ```
@HostActor
public struct ViewModelFactory {
    /// The kind's name.
    package nonisolated let kind: String
    /// The JSON Schema of the kind's args (``ViewModelArgs``), recorded the first time it is asked
    /// for (`host.describe`), not when the kind is registered.
    package var argsSchema: JSON { argsType.jsonSchema }
    private let argsType: any ViewModelArgs.Type
    private let makeFromJSON: (JSON?, ViewModelContext) throws(JSONDecodingError) -> AnyObject
    private let makePlaceholder: (ViewModelContext) -> AnyObject

    /// A factory of the kind `make` returns, made from its args.
    public init<VM: ViewModel>(_ make: @escaping @HostActor (VM.Args) -> VM) {
        kind = VM.kind
        argsType = VM.Args.self
        makeFromJSON = { (args, context) throws(JSONDecodingError) in
            let decoded = try VM.Args(json: args ?? .null, path: "params.args")
            return context.build { make(decoded) }
        }
        makePlaceholder = { context in context.build { make(VM.Args.placeholder) } }
    }

    /// A factory of `type` (the kind's type written out, where the closure does not show it).
    public init<VM: ViewModel>(_ type: VM.Type, _ make: @escaping @HostActor (VM.Args) -> VM) {
        self.init(make)
    }

    /// Makes a view-model from `args` (read under `params.args`) in `context`.
    package func make(args: JSON?, context: ViewModelContext) throws(JSONDecodingError) -> AnyObject {
        try makeFromJSON(args, context)
    }

    /// Describes the kind: `{kind, args, inputs:[{name, kind, value, …}], outputs:[{name, kind, schema}]}`.
    ///
    /// Reads the declarations of an instance made from ``ViewModelArgs/placeholder`` in a context
    /// that is safe to start work in: it has its own clock, which never moves (timers set in the
    /// initializer never fire), its commands and works refuse to start, and it reaches no other
    /// view-model.
    package func describe() -> JSON {
        let context = ViewModelContext(handle: "describe", kind: kind, clock: ManualClock(), locale: .en, describing: true)
        let instance = makePlaceholder(context)
        defer {
            context.dispose()
            withExtendedLifetime(instance) {}
        }
        return Self.describe(kind: kind, argsSchema: argsSchema, context: context)
    }

    static func describe(kind: String, argsSchema: JSON, context: ViewModelContext) -> JSON {
        var inputs: [JSON] = []
        for input in context.inputs {
            var object: JSONObject = ["name": .string(input.name), "kind": .string(input.kind.rawValue), "value": input.valueSchema]
            for extra in input.describeExtras { object.append(extra.key, extra.value) }
            if input.isSecret { object.append("secret", true) }
            inputs.append(.object(object))
        }
        var outputs: [JSON] = []
        for property in context.properties {
            outputs.append(["name": .string(property.name), "kind": "property", "schema": property.schema])
        }
        for event in context.events {
            outputs.append(["name": .string(event.name), "kind": "event", "schema": event.schema])
        }
        return ["kind": .string(kind), "args": argsSchema, "inputs": .array(inputs), "outputs": .array(outputs)]
    }
}
