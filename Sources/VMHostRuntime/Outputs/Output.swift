import VMHostEventLoop
import VMHostWire

/// A property output: `@Output var page = 0`. The view-model reads and sets it like any stored
/// property; every subscriber sees the value now and each later change (a BehaviorSubject, a
/// Driver), distinct until changed. Its name on the wire is the property's, and it is on the wire
/// whatever its Swift visibility (`@Output private var` too: ``ViewModel``'s member rules).
///
/// The value type is `Codable` and `Equatable`: its JSON and its schema both come from that one
/// declaration (a type may instead write its own, as a ``JSONEncodable``). `schema:` refines it
/// (`@Output(schema: ["type": "integer", "minimum": 0]) var countdown = 0`).
///
/// `$page` is the ``Property`` itself: to edit an array in place (`$items.append(contentsOf:)`),
/// to observe it, or to start a chain (`$page.removeDuplicates()…`).
@HostActor
@propertyWrapper
public struct Output<Value: Equatable & Encodable>: DeclaredMemberWrapper {
    let member: OutputMember<Value>

    /// An output starting at `wrappedValue`; `schema` refines the value type's schema.
    public init(wrappedValue: Value, schema: JSON? = nil) {
        member = OutputMember(property: Property(wrappedValue, schema: schema))
    }

    /// The value now; setting an equal one sends nothing.
    public var wrappedValue: Value {
        get { member.property.value }
        nonmutating set { member.property.value = newValue }
    }

    /// The property, for edits in place, observation and chains.
    public var projectedValue: Property<Value> { member.property }

    var declaredMember: any DeclaredMember { member }
}

@HostActor
final class OutputMember<Value: Equatable & Encodable>: DeclaredMember {
    let property: Property<Value>

    init(property: Property<Value>) {
        self.property = property
        ViewModelContext.declaring?.adopt(self)
    }

    func bind(name: String, owner: AnyObject, context: ViewModelContext) {
        property.name = name
        context.declareOutput(property)
    }

    func tearDown() { property.tearDown() }
}
