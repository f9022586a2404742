import VMHostEventLoop
import VMHostWire

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
/// // host.describe: {"type":"object","properties":{"listId":{"type":"string","minLength":1},
/// //   "pageSize":{"type":"integer","minimum":1,"maximum":100,"default":20}},"required":["listId"],"additionalProperties":false}
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

/// A view-model kind: a pure mapping of inputs to outputs that declares its members through a
/// ``ViewModelContext`` in its initializer.
@HostActor
public protocol ViewModel: AnyObject {
    associatedtype Args: ViewModelArgs
    /// The kind's name on the wire (`ProductList`).
    static var kind: String { get }
}

/// How the host makes view-models of one kind: its name, its args schema and a constructor.
///
/// Registering a kind with the host is one line:
/// `ViewModelFactory(ProductListViewModel.self) { args, context in ProductListViewModel(args: args, context: context, api: api) }`.
@HostActor
public struct ViewModelFactory {
    public let kind: String
    /// The JSON Schema of the kind's args (``ViewModelArgs``), recorded the first time it is asked
    /// for (`host.describe`), not when the kind is registered: a host starts without recording any.
    public var argsSchema: JSON { argsType.jsonSchema }
    private let argsType: any ViewModelArgs.Type
    let make: (JSON?, ViewModelContext) throws(JSONDecodingError) -> AnyObject
    let makePlaceholder: (ViewModelContext) -> AnyObject

    public init<VM: ViewModel>(_ type: VM.Type, _ make: @escaping (VM.Args, ViewModelContext) -> VM) {
        kind = VM.kind
        argsType = VM.Args.self
        self.make = { (args, context) throws(JSONDecodingError) in
            let instance = make(try VM.Args(json: args ?? .null, path: "params.args"), context)
            context.retain(instance)
            return instance
        }
        makePlaceholder = { context in make(VM.Args.placeholder, context) }
    }

    /// Makes a view-model from `args` (read under `params.args`).
    public func make(args: JSON?, context: ViewModelContext) throws(JSONDecodingError) -> AnyObject {
        try make(args, context)
    }

    /// Describes the kind: `{kind, args, inputs:[{name, kind, value, …}], outputs:[{name, kind, schema}]}`.
    ///
    /// Reads the declarations of an instance made from ``ViewModelArgs/placeholder`` in a context
    /// that is safe to start work in: it has its own clock, which never moves (timers set in the
    /// initializer never fire), its commands refuse to start, and it reaches no other view-model.
    public func describe(clock: any HostClock) -> JSON {
        let context = ViewModelContext(handle: "describe", kind: kind, clock: ManualClock(), locale: .zhHans, describing: true)
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
