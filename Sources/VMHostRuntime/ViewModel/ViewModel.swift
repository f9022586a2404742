import VMHostEventLoop
import VMHostWire

/// The arguments of a view-model kind (`vm.create {kind, args}`), read with errors that name the
/// argument (`params.args.pageSize: must be between 1 and 100, got 0`).
public protocol ViewModelArgs: Sendable {
    init(reader: JSONReader) throws(JSONDecodingError)
    /// The JSON Schema of the args object, for `host.describe`.
    static var schema: JSON { get }
    /// Some valid arguments: used once to instantiate the kind and read its declared members.
    static var placeholder: Self { get }
}

/// Arguments of a kind that takes none.
public struct NoArgs: ViewModelArgs {
    public init() {}
    public init(reader: JSONReader) throws(JSONDecodingError) { try reader.rejectUnknown([]) }
    public static var schema: JSON { ["type": "object", "properties": [:], "additionalProperties": false] }
    public static var placeholder: NoArgs { NoArgs() }
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
    public let argsSchema: JSON
    let make: (JSONReader, ViewModelContext) throws(JSONDecodingError) -> AnyObject
    let makePlaceholder: (ViewModelContext) -> AnyObject

    public init<VM: ViewModel>(_ type: VM.Type, _ make: @escaping (VM.Args, ViewModelContext) -> VM) {
        kind = VM.kind
        argsSchema = VM.Args.schema
        self.make = { (reader, context) throws(JSONDecodingError) in
            let instance = make(try VM.Args(reader: reader), context)
            context.retain(instance)
            return instance
        }
        makePlaceholder = { context in make(VM.Args.placeholder, context) }
    }

    /// Makes a view-model from `args` (read under `params.args`).
    public func make(args: JSON?, context: ViewModelContext) throws(JSONDecodingError) -> AnyObject {
        try make(JSONReader(args, path: "params.args"), context)
    }

    /// Describes the kind: `{kind, args, inputs:[{name, kind, value, …}], outputs:[{name, kind, schema}]}`.
    public func describe(clock: any HostClock) -> JSON {
        let context = ViewModelContext(handle: "describe", kind: kind, clock: clock, locale: .zhHans)
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
