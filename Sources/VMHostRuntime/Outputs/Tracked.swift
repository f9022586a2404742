import VMHostEventLoop
import VMHostWire

/// State a kind keeps for itself, that its `@Derived` outputs read: `@Tracked var todos: [Todo] = []`.
/// Neither an input nor an output (nothing of it is on the wire), but a source like one: a derived
/// output that reads it is computed again when it changes.
///
/// ```swift
/// @Tracked var todos: [Todo] = []
/// @Derived({ $0.todos.filter($0.filter.shows) }) var items: [Todo]
/// @Derived({ $0.todos.count { !$0.done } }) var remaining: Int
/// ```
@HostActor
@propertyWrapper
public struct Tracked<Value: Equatable>: DeclaredMemberWrapper {
    let member: TrackedMember<Value>

    /// State starting at `wrappedValue`.
    public init(wrappedValue: Value) {
        member = TrackedMember(state: Property(wrappedValue))
    }

    /// The state now; a change recomputes the derived outputs that read it.
    public var wrappedValue: Value {
        get { member.state.value }
        nonmutating set { member.state.value = newValue }
    }

    /// The state as a property, to observe or to chain.
    public var projectedValue: Property<Value> { member.state }

    var declaredMember: any DeclaredMember { member }
}

@HostActor
final class TrackedMember<Value: Equatable>: DeclaredMember {
    let state: Property<Value>

    init(state: Property<Value>) {
        self.state = state
        ViewModelContext.declaring?.adopt(self)
    }

    func bind(name: String, owner: AnyObject, context: ViewModelContext) {
        state.name = name
    }

    func tearDown() { state.tearDown() }
}
