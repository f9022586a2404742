import VMHostEventLoop
import VMHostWire

/// How an input is used: a value that is set, a fire-and-forget trigger, or a command with a result.
public enum InputKind: String, Sendable {
    case value, trigger, command
}

/// Why a send was refused.
public enum InputError: Error, Sendable, Equatable {
    /// The value did not decode; the path names it (`params.value: expected a string, got null`).
    case invalidValue(JSONDecodingError)
    /// The input is disabled right now; `reason` says why (`already running`, `no more pages`).
    case disabled(reason: String)
}

/// The value type of inputs that take no value: accepts only an absent value or `null`.
public struct NoValue: JSONDecodable, JSONEncodable, Sendable, Equatable {
    public init() {}
    public static var jsonTypeDescription: String { "no value" }
    public static var jsonSchema: JSON { ["type": "null"] }
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard json.isNull else { throw JSONDecodingError(path: path, problem: "this input takes no value, got \(json.typeName)") }
    }
    public var json: JSON { .null }
}

/// An input seen without its value type: what the host dispatches `vm.send` to.
@HostActor
public protocol AnyInput: AnyObject {
    var name: String { get }
    var kind: InputKind { get }
    /// The JSON Schema of the value (`{"type":"null"}` for none).
    var valueSchema: JSON { get }
    /// Extra members for `host.describe` (a command's policy).
    var describeExtras: JSONObject { get }
    /// Whether the value is a secret (a password, a code): masked wherever a message is recorded
    /// (the trace, the logs), and `secret: true` in `host.describe`.
    var isSecret: Bool { get }
}

extension AnyInput {
    /// Inputs are not secret unless declared so.
    public var isSecret: Bool { false }
}

/// A value or trigger input: applied at once.
@HostActor
public protocol SynchronousInput: AnyInput {
    func send(_ value: JSON) throws(InputError)
}

/// An input that sets a value (text typed, a mode chosen).
@HostActor
public final class ValueInput<Value: JSONDecodable & JSONEncodable>: SynchronousInput {
    public let name: String
    /// The schema given at declaration, if any; else the value type's, made when asked.
    private let declaredSchema: JSON?
    public var valueSchema: JSON { declaredSchema ?? Value.jsonSchema }
    public var kind: InputKind { .value }
    public var describeExtras: JSONObject { [:] }
    public let isSecret: Bool
    private let apply: (Value) -> Void

    init(name: String, schema: JSON?, secret: Bool = false, apply: @escaping (Value) -> Void) {
        self.name = name
        self.declaredSchema = schema
        self.isSecret = secret
        self.apply = apply
    }

    public func send(_ value: JSON) throws(InputError) {
        do throws(JSONDecodingError) {
            apply(try Value(json: value, path: "params.value"))
        } catch {
            throw .invalidValue(error)
        }
    }
}

/// A fire-and-forget action (`cancel`, `create`), optionally with a value (`rename {groupId}`),
/// optionally disabled with a reason.
@HostActor
public final class Trigger<Value: JSONDecodable>: SynchronousInput {
    public let name: String
    /// The schema given at declaration; else `{"type":"null"}`, made when asked.
    private let declaredSchema: JSON?
    public var valueSchema: JSON { declaredSchema ?? NoValue.jsonSchema }
    public var kind: InputKind { .trigger }
    public var describeExtras: JSONObject { [:] }
    private let fire: (Value) throws(InputError) -> Void

    init(name: String, schema: JSON?, fire: @escaping (Value) throws(InputError) -> Void) {
        self.name = name
        self.declaredSchema = schema
        self.fire = fire
    }

    public func send(_ value: JSON) throws(InputError) {
        let decoded: Value
        do throws(JSONDecodingError) { decoded = try Value(json: value, path: "params.value") } catch { throw .invalidValue(error) }
        try fire(decoded)
    }
}
