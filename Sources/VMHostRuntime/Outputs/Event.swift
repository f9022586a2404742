import VMHostEventLoop
import VMHostWire

/// An event output: occurrences with no current value (a PublishSubject): `navigate`, `saved`,
/// `dismiss`. Every emission reaches subscribers in order; events are never coalesced or dropped.
///
/// ```swift
/// let navigate = Event<Route>()          // named "navigate" by its stored property
/// ...
/// vm.navigate.emit(.productList)
/// ```
///
/// The value type is `Codable` (its JSON and schema come from that declaration) or writes its
/// own as a ``JSONEncodable``. An event with no value is an `Event<NoValue>` (`emit()`). An emission
/// made by a cancelled run is dropped, as its changes are.
@HostActor
public final class Event<Value: Encodable>: AnyEvent, DeclaredMember {
    /// The event's name on the wire; empty until the view-model is bound.
    package internal(set) var name: String
    /// The schema given at declaration, if any; else the value type's, made when asked.
    private let declaredSchema: JSON?
    package var schema: JSON { declaredSchema ?? OutputSchema.of(Value.self) }
    weak var owner: ViewModelContext?

    /// A value of the event's type made of placeholders, as JSON (nil when the type cannot make one).
    package var sample: JSON? { OutputSample.of(Value.self) }

    /// An event of the view-model being built; `schema` refines the value type's schema.
    public init(schema: JSON? = nil) {
        self.name = ""
        self.declaredSchema = schema
        ViewModelContext.declaring?.adopt(self)
    }

    init(name: String) {
        self.name = name
        self.declaredSchema = nil
    }

    /// Emits `value` to every subscriber of the event.
    public func emit(_ value: Value) {
        guard !Task.isCancelled else { return }
        emitUnchecked(value)
    }

    func emitUnchecked(_ value: Value) {
        owner?.eventDidEmit(name: name, value: JSONValueEncoder.encode(value))
    }

    func bind(name: String, owner: AnyObject, context: ViewModelContext) {
        self.name = name
        self.owner = context
        context.declareEvent(self)
    }
}

extension Event where Value == NoValue {
    /// Emits an event that carries no value (`dismiss`): `null` on the wire.
    public func emit() { emit(NoValue()) }
}

/// An event seen without its value type.
@HostActor
package protocol AnyEvent: AnyObject {
    /// The event's name on the wire.
    var name: String { get }
    /// Its value's JSON Schema.
    var schema: JSON { get }
    /// A value of the event's type made of placeholders, as JSON, for the test kit.
    var sample: JSON? { get }
}
