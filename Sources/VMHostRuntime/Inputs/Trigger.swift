import VMHostEventLoop
import VMHostWire

/// A trigger input: a fire-and-forget action (`cancel`, `create`), optionally with a value
/// (`rename {groupId}`), answered `{}` once it ran. Written as `Trigger` inside the kind
/// (``ViewModel/Trigger``):
///
/// ```swift
/// let cancel = Trigger { vm in vm.refresh.cancelAll() }
/// let edit = Trigger(of: TodoReference.self) { vm, todo in vm.edit.emit(try vm.editorArgs(of: todo)) }
/// ```
///
/// The body is handed the view-model and must not capture it. It may refuse with
/// `throw .refused("id", "…")` (a well-formed value that is wrong now, -32602) or
/// `throw .disabled("…")` (-32003), and throw any other error, as a command's body does: a
/// ``DomainFailure`` is emitted once on the `error` event and answered -32004, anything else is a
/// bug (-32603). No `throws(InputError)` annotation is needed.
@HostActor
public final class ViewModelTrigger<Owner: AnyObject, Value: InputValue>: SynchronousInput, DeclaredMember {
    /// The trigger's name on the wire; empty until the view-model is bound.
    package private(set) var name = ""
    private let declaredSchema: JSON?
    package var valueSchema: JSON { declaredSchema ?? Value.jsonSchema }
    package var kind: InputKind { .trigger }
    package var describeExtras: JSONObject { [:] }
    private var fire: (@HostActor (Owner, Value) throws -> Void)?
    private weak var context: ViewModelContext?
    private weak var owner: Owner?

    /// A trigger that carries a value of `type`; `schema` refines the type's schema.
    public init(of type: Value.Type, schema: JSON? = nil, _ fire: @escaping @HostActor (Owner, Value) throws -> Void) {
        declaredSchema = schema
        self.fire = fire
        ViewModelContext.declaring?.adopt(self)
    }

    package func validate(_ value: JSON) throws(JSONDecodingError) { _ = try Value.read(sent: value) }

    package func send(_ value: JSON) throws(InputError) -> CommandOutcome {
        try fire(decoded: try Value.admit(sent: value))
    }

    /// Fires with a value already read, as a send of it would (the test kit's typed sends): a
    /// refusal is thrown, a failure answered (and a domain failure emitted on `error`).
    package func fire(decoded value: Value) throws(InputError) -> CommandOutcome {
        guard let owner, let fire else { throw .disabled(reason: "the view-model is disposed") }
        do {
            try fire(owner, value)
            return .succeeded(nil)
        } catch let refusal as InputError {
            throw refusal
        } catch let failure as any DomainFailure {
            var error = failure.domainError(in: context?.locale ?? .en)
            error.input = name
            context?.error.emitUnchecked(error)
            return .failed(error)
        } catch {
            return .crashed(String(describing: error))
        }
    }

    func bind(name: String, owner: AnyObject, context: ViewModelContext) {
        self.name = name
        self.owner = owner as? Owner
        self.context = context
        context.declareInput(self)
    }

    func tearDown() { fire = nil }
}

extension ViewModelTrigger where Value == NoValue {
    /// A trigger without a value.
    public convenience init(_ fire: @escaping @HostActor (Owner) throws -> Void) {
        self.init(of: NoValue.self) { owner, _ in try fire(owner) }
    }
}
