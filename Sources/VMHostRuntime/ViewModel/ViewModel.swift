import VMHostEventLoop
import VMHostWire

/// The arguments of a view-model kind (`vm.create {kind, args}`), read with errors that name the
/// argument (`params.args.pageSize: must be between 1 and 100, got 0`).
///
/// Declare the schema and the reader; the placeholder is derived from the schema, and the unknown
/// members refused by ``JSONReader/rejectUnknown(schema:)`` are the schema's `properties`:
///
/// ```swift
/// struct Args: ViewModelArgs {
///     var listId: String
///     static let schema: JSON = [
///         "type": "object", "properties": ["listId": ["type": "string", "minLength": 1]],
///         "required": ["listId"], "additionalProperties": false,
///     ]
///     init(reader: JSONReader) throws(JSONDecodingError) {
///         try reader.rejectUnknown(schema: Self.schema)
///         listId = try reader.required("listId")
///     }
/// }
/// ```
public protocol ViewModelArgs: Sendable {
    init(reader: JSONReader) throws(JSONDecodingError)
    /// The JSON Schema of the args object, for `host.describe`.
    static var schema: JSON { get }
    /// Some valid arguments: used once to instantiate the kind and read its declared members.
    /// By default, the reader applied to ``JSONSchemaExample/minimal(_:)`` of ``schema``.
    static var placeholder: Self { get }
}

extension ViewModelArgs {
    /// The args read from the smallest value ``schema`` accepts. Stops with a message naming the
    /// type when the reader refuses it: the schema and the reader disagree.
    public static var placeholder: Self {
        let example = JSONSchemaExample.minimal(schema)
        do throws(JSONDecodingError) {
            return try Self(reader: JSONReader(example, path: "params.args"))
        } catch {
            fatalError("\(Self.self): the reader refuses \(example), the smallest value its schema accepts (\(error)); fix the schema or declare `placeholder`")
        }
    }
}

extension JSONReader {
    /// Fails on any member that `schema` (an object schema) does not list in `properties`.
    public func rejectUnknown(schema: JSON) throws(JSONDecodingError) {
        try rejectUnknown(Set(schema["properties"]?.objectValue?.keys ?? []))
    }
}

/// Arguments of a kind that takes none.
public struct NoArgs: ViewModelArgs {
    /// No arguments.
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
