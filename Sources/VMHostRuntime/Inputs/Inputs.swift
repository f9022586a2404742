import VMHostEventLoop
import VMHostWire

/// How an input is used: a value that is set, a fire-and-forget trigger, or a command with a result.
package enum InputKind: String, Sendable {
    case value, trigger, command
}

/// Why a send was refused.
public enum InputError: Error, Sendable, Equatable {
    /// The value did not decode; the path names it (`params.value: expected a string, got null`).
    /// Answered -32602.
    case invalidValue(JSONDecodingError)
    /// The value is well-formed but not acceptable now (an id that is not in the list); `path` names
    /// the part refused (`params.value.groupId`) and `reason` says why. Answered -32602 (SPEC §2).
    case refused(path: String, reason: String)
    /// The input is disabled right now, whatever the value; `reason` says why (`already running`,
    /// `no more pages`). Answered -32003.
    case disabled(reason: String)

    /// Refuses a well-formed value that is wrong now: `throw .refused("groupId", "no group \"g9\"")`
    /// names `params.value.groupId`. An empty `member` names the whole value.
    public static func refused(_ member: String, _ reason: String) -> InputError {
        .refused(path: member.isEmpty ? "params.value" : "params.value.\(member)", reason: reason)
    }

    /// Disables the input now: `throw .disabled("no more pages")`, in any body (-32003).
    public static func disabled(_ reason: String) -> InputError { .disabled(reason: reason) }

    /// What an error thrown by a `check` (or another refusing closure) refuses with: an
    /// ``InputError`` as it is; a ``DomainFailure`` the whole value, with its message in `locale`;
    /// anything else the whole value, naming the error's type (its text may hold what the value held).
    static func refusal(_ error: any Error, locale: AppLocale?) -> InputError {
        switch error {
        case let refusal as InputError: refusal
        case let failure as any DomainFailure: .refused("", failure.domainError(in: locale ?? .en).message)
        default: .refused("", "refused (\(type(of: error)))")
        }
    }

    /// The message a client reads: `params.value.groupId: no group "g9" in the list`.
    package var message: String {
        switch self {
        case .invalidValue(let error): error.description
        case .refused(let path, let reason): "\(path): \(reason)"
        case .disabled(let reason): reason
        }
    }
}

extension Error where Self == InputError {
    /// `throw .refused("id", "no todo \"t9\"")` in a body or check that throws any error (no
    /// `throws(InputError)` needed): ``InputError/refused(_:_:)``.
    public static func refused(_ member: String, _ reason: String) -> InputError { InputError.refused(member, reason) }

    /// `throw .disabled("no more pages")` in a body that throws any error: ``InputError/disabled(_:)``.
    public static func disabled(_ reason: String) -> InputError { InputError.disabled(reason: reason) }
}

/// A type an input can carry: it is read from JSON with errors naming the path, and it describes
/// itself with a JSON Schema, which `host.describe` reports as the input's `value`.
///
/// The basic types (`String`, `Int`, `Int64`, `Double`, `Bool`, ``JSON``, `JSONObject`), arrays and
/// optionals of encodable input values, and ``NoValue`` conform. An enum with raw values conforms
/// with no body (its cases give its schema and its errors), and an object is declared by its reads
/// as an ``ObjectValue``:
///
/// ```swift
/// struct TodoReference: ObjectValue {
///     var id: String
///     init(reader: ObjectReader) throws(JSONDecodingError) { id = try reader.required("id", .nonEmpty) }
/// }
/// ```
///
/// A type of your own otherwise reads itself in `init(json:path:)` and writes its `jsonSchema`; one
/// that is also `JSONEncodable` shares one `jsonSchema`.
public protocol InputValue: JSONDecodable {
    /// The JSON Schema of the values this type reads: what `host.describe` says the input accepts.
    static var jsonSchema: JSON { get }
}

extension String: InputValue {}
extension Int: InputValue {}
extension Int64: InputValue {}
extension Double: InputValue {}
extension Bool: InputValue {}
extension JSON: InputValue {}
extension JSONObject: InputValue {
    /// Any object.
    public static var jsonSchema: JSON { ["type": "object"] }
}
extension Array: InputValue where Element: InputValue & JSONEncodable {}
extension Optional: InputValue where Wrapped: InputValue & JSONEncodable {}

/// The value type of inputs that take no value (accepts only an absent value or `null`), and of
/// events that carry none (`null` on the wire).
public struct NoValue: InputValue, JSONEncodable, Codable, Sendable, Equatable {
    /// No value.
    public init() {}
    /// Reads `null`.
    public init(from decoder: any Decoder) throws {}
    /// Writes `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encodeNil()
    }
    /// `no value`.
    public static var jsonTypeDescription: String { "no value" }
    /// `{"type":"null"}`.
    public static var jsonSchema: JSON { ["type": "null"] }
    /// Reads an absent value or `null`; anything else is refused, naming `path`.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard json.isNull else { throw JSONDecodingError(path: path, problem: "this input takes no value, got \(json.typeName)") }
    }
    /// `null`.
    public var json: JSON { .null }
}

extension InputValue {
    /// Reads a value a client sent (`vm.send {value}`), its errors naming `params.value`.
    static func read(sent value: JSON) throws(JSONDecodingError) -> Self {
        try Self(json: value, path: "params.value")
    }

    /// ``read(sent:)``, a value that does not read refused as ``InputError/invalidValue(_:)`` (-32602).
    static func admit(sent value: JSON) throws(InputError) -> Self {
        do throws(JSONDecodingError) { return try read(sent: value) } catch { throw .invalidValue(error) }
    }
}

/// An input seen without its value type: what the host dispatches `vm.send` to.
@HostActor
package protocol AnyInput: AnyObject {
    var name: String { get }
    var kind: InputKind { get }
    /// The JSON Schema of the value (`{"type":"null"}` for none).
    var valueSchema: JSON { get }
    /// Extra members for `host.describe` (a command's policy).
    var describeExtras: JSONObject { get }
    /// Reads `value` as this input would, without applying it: throws what a send of it would
    /// answer -32602 for. What ``valueSchema`` accepts must read here, and what it refuses must not.
    func validate(_ value: JSON) throws(JSONDecodingError)
    /// Whether the value is a secret (a password, a code): masked wherever a message is recorded
    /// (the trace, the logs), and `secret: true` in `host.describe`.
    var isSecret: Bool { get }
    /// This input as one applied at once, if it is one: what `as? any SynchronousInput` answers,
    /// without the run-time search of the type's conformances a cast makes at every send.
    var asSynchronous: (any SynchronousInput)? { get }
}

extension AnyInput {
    /// Inputs are not secret unless declared so.
    package var isSecret: Bool { false }
    /// An input is not applied at once unless it is a ``SynchronousInput``.
    package var asSynchronous: (any SynchronousInput)? { nil }
}

extension SynchronousInput {
    /// Itself.
    package var asSynchronous: (any SynchronousInput)? { self }
}

/// A value or trigger input: applied at once.
@HostActor
package protocol SynchronousInput: AnyInput {
    /// Applies `value`: a refusal is thrown; how it went is returned (a trigger's body may fail:
    /// answered as a command's run that failed so is).
    func send(_ value: JSON) throws(InputError) -> CommandOutcome
}
