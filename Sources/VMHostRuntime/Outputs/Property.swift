import VMHostEventLoop
import VMHostWire

/// An output with a current value (a BehaviorSubject, a Driver): subscribers get the value now and
/// every later change. Setting an equal value changes nothing and sends nothing.
///
/// ```swift
/// let page: Property<Int>
/// init(context: ViewModelContext) {
///     page = context.property("page", 0)
/// }
/// ...
/// page.value = 2      // subscribers of "page" see 2 in this turn's vm.changed
/// ```
@HostActor
public final class Property<Value: Equatable & JSONEncodable>: AnyProperty {
    public let name: String
    /// The schema given at declaration, if any; else the value type's (made when asked, not stored:
    /// every view-model of a kind would otherwise hold its own copy).
    private let declaredSchema: JSON?
    public var schema: JSON { declaredSchema ?? Value.jsonSchema }
    private var observers: [Observer] = []

    /// Called after a change, in order of registration.
    private enum Observer {
        case value((Value) -> Void)
        /// Shared by every source of a ``derive(_:from:_:)``: one closure, however many sources.
        case change(() -> Void)
    }
    weak var owner: ViewModelContext?
    /// Where it was declared among its view-model's properties (0, 1, …); -1 when undeclared.
    public internal(set) var position = -1

    public var value: Value {
        didSet {
            guard value != oldValue else { return }
            owner?.propertyDidChange(self)
            for observer in observers {
                switch observer {
                case .value(let observe): observe(value)
                case .change(let handle): handle()
                }
            }
        }
    }

    public init(_ name: String, _ initial: Value, schema: JSON? = nil) {
        self.name = name
        self.value = initial
        self.declaredSchema = schema
    }

    /// The value as JSON, as written on the wire.
    public var json: JSON { value.json }

    /// Calls `observer` after every change, in the turn of the change (for derived state).
    public func observe(_ observer: @escaping (Value) -> Void) {
        observers.append(.value(observer))
    }

    /// Keeps this property equal to `transform(source.value)`, now and after every change of `source`.
    public func bind<Source>(to source: Property<Source>, _ transform: @escaping (Source) -> Value) {
        value = transform(source.value)
        source.observe { [unowned self] in self.value = transform($0) }
    }

    /// Keeps this property equal to `source`.
    public func bind(to source: Property<Value>) {
        bind(to: source) { $0 }
    }
}

/// A property seen without its value type: what the host reads.
@HostActor
public protocol AnyProperty: AnyObject {
    var name: String { get }
    var schema: JSON { get }
    var json: JSON { get }
    /// Where it was declared among its view-model's properties (0, 1, …).
    var position: Int { get }
}

/// Recomputes `compute()` into `target` whenever one of `sources` changes (combineLatest +
/// distinctUntilChanged): the target changes, and is sent, only when the computed value differs.
@HostActor
public func derive<Value>(_ target: Property<Value>, from sources: [any ObservableProperty], _ compute: @escaping () -> Value) {
    target.value = compute()
    let update = { [unowned target] in target.value = compute() }
    for source in sources { source.onChange(update) }
}

/// A property that can report changes without its type: for ``derive(_:from:_:)``.
@HostActor
public protocol ObservableProperty: AnyObject {
    func onChange(_ handler: @escaping () -> Void)
}

extension Property: ObservableProperty {
    public func onChange(_ handler: @escaping () -> Void) { observers.append(.change(handler)) }
}
