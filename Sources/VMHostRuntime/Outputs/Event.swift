import VMHostEventLoop
import VMHostWire

/// An output of occurrences with no current value (a PublishSubject): `error`, `navigate`, `saved`.
/// Every emission reaches subscribers in order; events are never coalesced or dropped.
@HostActor
public final class Event<Value: JSONEncodable>: AnyEvent {
    public let name: String
    /// The schema given at declaration, if any; else the value type's, made when asked.
    private let declaredSchema: JSON?
    public var schema: JSON { declaredSchema ?? Value.jsonSchema }
    weak var owner: ViewModelContext?

    public init(_ name: String, schema: JSON? = nil) {
        self.name = name
        self.declaredSchema = schema
    }

    public func emit(_ value: Value) {
        owner?.eventDidEmit(name: name, value: value.json)
    }
}

extension Event where Value == JSON {
    /// Emits an event that carries no value (`dismiss`).
    public func emit() { emit(.null) }
}

/// An event seen without its value type.
@HostActor
public protocol AnyEvent: AnyObject {
    var name: String { get }
    var schema: JSON { get }
}
