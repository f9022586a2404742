import VMHostEventLoop
import VMHostWire

/// A value input: `@Input var query = ""`. A client sets it with `vm.send {input, value}` (answered
/// `{}` once applied, -32602 when the value does not read); the view-model reads it like a stored
/// property, and `$query` is its ``Property``, to chain (`$query.debounce(…)`) or to read in a
/// `@Derived` output. Its name on the wire is the property's. It is not an output: a password
/// stays inside the host (``Field`` is an input that is shown back).
///
/// - `schema:` refines the value type's schema (a `minLength`, an `enum`); it must describe the
///   same values the type reads.
/// - `secret: true` masks its values wherever messages are recorded (the trace, the logs) and says
///   `secret: true` in `host.describe`.
/// - `map:` turns each value read into the one kept (a phone number without its spaces); an equal
///   result changes nothing.
@HostActor
@propertyWrapper
public struct Input<Value: InputValue & Equatable>: DeclaredMemberWrapper {
    let member: InputMember<Value>

    /// A value input starting at `wrappedValue`.
    public init(wrappedValue: Value, schema: JSON? = nil, secret: Bool = false, map: (@HostActor (Value) -> Value)? = nil) {
        member = InputMember(initial: wrappedValue, schema: schema, secret: secret, map: map, shown: false)
    }

    /// The value last set (by a client, or by the view-model).
    public var wrappedValue: Value {
        get { member.state.value }
        nonmutating set { member.state.value = newValue }
    }

    /// The value as a property, to chain or observe.
    public var projectedValue: Property<Value> { member.state }

    var declaredMember: any DeclaredMember { member }
}

/// A value input that is also a property output of the same name: `@Field var title = ""`. What the
/// client sets is shown back, and so is what the view-model sets (a title trimmed on save, a mode
/// chosen by the view-model). See ``Input`` for its options.
@HostActor
@propertyWrapper
public struct Field<Value: InputValue & Equatable & Encodable>: DeclaredMemberWrapper {
    let member: InputMember<Value>

    /// A field starting at `wrappedValue`; `schema` describes both the input and the output.
    public init(wrappedValue: Value, schema: JSON? = nil, secret: Bool = false, map: (@HostActor (Value) -> Value)? = nil) {
        member = InputMember(initial: wrappedValue, schema: schema, secret: secret, map: map, shown: true)
    }

    /// The value shown: the last set, by a client or by the view-model.
    public var wrappedValue: Value {
        get { member.state.value }
        nonmutating set { member.state.value = newValue }
    }

    /// The value as a property, to chain or observe.
    public var projectedValue: Property<Value> { member.state }

    var declaredMember: any DeclaredMember { member }
}

@HostActor
final class InputMember<Value: InputValue & Equatable>: SynchronousInput, DeclaredMember {
    private(set) var name = ""
    let state: Property<Value>
    private let declaredSchema: JSON?
    let isSecret: Bool
    private let map: (@HostActor (Value) -> Value)?
    private let shown: Bool
    /// What ``send(_:)`` does, made in the initializer: the view-model's kind calls it knowing
    /// `Value`, so this is compiled for it, while `send` is called through `any SynchronousInput`,
    /// where `Value` is generic and setting the property looked up the metadata of its types at
    /// run time.
    private let admitAndApply: @HostActor (InputMember<Value>, JSON) throws(InputError) -> Void

    init(initial: Value, schema: JSON?, secret: Bool, map: (@HostActor (Value) -> Value)?, shown: Bool) {
        state = Property(initial, schema: schema)
        declaredSchema = schema
        isSecret = secret
        self.map = map
        self.shown = shown
        admitAndApply = { member, value throws(InputError) in member.apply(try Value.admit(sent: value)) }
        ViewModelContext.declaring?.adopt(self)
    }

    var kind: InputKind { .value }
    var valueSchema: JSON { declaredSchema ?? Value.jsonSchema }
    var describeExtras: JSONObject { [:] }

    func validate(_ value: JSON) throws(JSONDecodingError) { _ = try Value.read(sent: value) }

    func send(_ value: JSON) throws(InputError) -> CommandOutcome {
        try admitAndApply(self, value)
        return .succeeded(nil)
    }

    /// Sets a value already read, as a send of it would (``map`` applied).
    func apply(_ value: Value) {
        if let map {
            state.value = map(value)
        } else {
            state.value = value
        }
    }

    func bind(name: String, owner: AnyObject, context: ViewModelContext) {
        self.name = name
        state.name = name
        context.declareInput(self)
        if shown, let output = self as? any ShownInput { output.declareOutput(in: context) }
    }

    func tearDown() { state.tearDown() }
}

/// A field's output side, for inputs whose value type can be written.
@HostActor
private protocol ShownInput {
    func declareOutput(in context: ViewModelContext)
}

extension InputMember: ShownInput where Value: Encodable {
    fileprivate func declareOutput(in context: ViewModelContext) { context.declareOutput(state) }
}
