import VMHostEventLoop
import VMHostWire

/// A property output computed from the view-model's other values: `@Derived({ … }) var name: T`.
///
/// Its sources are found, not listed: every property the computation reads (an `@Output`, an
/// `@Input`, a `@Field`, another `@Derived`, a command's `isExecuting`) becomes one, and when any
/// of them changes the value is computed again, in the same turn (combineLatest +
/// distinctUntilChanged: the output changes, and is sent, only when the result differs). The
/// sources are found again at each computation, so a branch not taken adds none.
///
/// ```swift
/// @Derived({ $0.mode == .code ? Tab.selected : Tab.unselected }) var codeTabColor: TabColor
/// @Derived({ !$0.submit.isExecuting && $0.submitBlocker() == nil }) var canSubmit: Bool
/// ```
///
/// The closure is handed the view-model and must not capture it. It is first run once the
/// view-model is made (after its initializer), so an initializer cannot read the value.
@HostActor
@propertyWrapper
public struct DerivedOutput<Owner: AnyObject, Value: Equatable & Codable>: DeclaredMemberWrapper {
    let member: DerivedMember<Owner, Value>

    /// An output computed by `compute`; `schema` refines the value type's schema.
    public init(_ compute: @escaping @HostActor (Owner) -> Value, schema: JSON? = nil) {
        member = DerivedMember(compute: compute, schema: schema)
    }

    /// The value last computed.
    public var wrappedValue: Value { member.property.value }

    /// The property, to observe or to chain.
    public var projectedValue: Property<Value> { member.property }

    var declaredMember: any DeclaredMember { member }
}

@HostActor
final class DerivedMember<Owner: AnyObject, Value: Equatable & Codable>: DeclaredMember {
    let property: Property<Value>
    private let compute: (Owner) -> Value
    private weak var owner: Owner?
    private let node = DerivedNode()

    init(compute: @escaping (Owner) -> Value, schema: JSON?) {
        guard let placeholder = CodableSchema.placeholder(of: Value.self) else {
            fatalError("@Derived of \(Value.self): the type has no placeholder value to hold before its first computation")
        }
        property = Property(placeholder, schema: schema)
        self.compute = compute
        // Made here, not in `start`: the view-model's kind calls this initializer knowing `Owner`
        // and `Value`, so the closure and the `update` it runs are compiled for them; `start` is
        // called through `any DeclaredMember`, where they are generic, and every recomputation then
        // looked up the metadata of the property's types at run time.
        node.recompute = { [unowned self] in update() }
        ViewModelContext.declaring?.adopt(self)
    }

    func bind(name: String, owner: AnyObject, context: ViewModelContext) {
        property.name = name
        self.owner = owner as? Owner
        context.declareOutput(property)
    }

    func start(context: ViewModelContext) {
        update()
    }

    private func update() {
        guard let owner else { return }
        property.set(node.track { compute(owner) })
    }

    func tearDown() {
        node.stop()
        property.tearDown()
    }
}

/// A property a derived output may read: it tells the derivation when it changes.
@HostActor
protocol DerivationSource: AnyObject {
    func addDependent(_ node: DerivedNode)
    func removeDependent(_ node: DerivedNode)
}

/// The sources of one derived value, found by what its computation reads.
@HostActor
final class DerivedNode {
    /// The derivation computing now, which reads report to.
    static var computing: DerivedNode?

    var recompute: () -> Void = {}
    private var sources: [Weak] = []
    private var reads: [any DerivationSource] = []
    private var isComputing = false

    private struct Weak {
        weak var source: (any DerivationSource)?
    }

    // The loops below are written out: a closure made here and handed to the standard library
    // (`contains(where:)`, `map`) checks at run time that it runs on the host actor, on every call,
    // and a Login input runs these dozens of times.

    // Each access to a stored property of this class is checked at run time for exclusivity
    // (`swift_beginAccess`), so the arrays are read once into locals where that is enough.

    /// Runs `body`, making what it reads the sources of this derivation.
    func track<Result>(_ body: () -> Result) -> Result {
        let outer = Self.computing
        Self.computing = self
        isComputing = true
        // `reads` is empty here: only a computation of this node fills it, and it ends emptied.
        let result = body()
        Self.computing = outer
        isComputing = false
        if !readSameSources() {
            for old in sources {
                guard let source = old.source else { continue }
                if !Self.holds(reads, source) { source.removeDependent(self) }
            }
            sources.removeAll(keepingCapacity: true)
            for source in reads {
                source.addDependent(self)
                sources.append(Weak(source: source))
            }
        }
        reads.removeAll(keepingCapacity: true)
        return result
    }

    /// When the computation just made read the sources of the last, in the same order: adds this
    /// node to each (as a change of sources would; a source already holding it is unchanged) and
    /// answers true, leaving `sources` as it is. The arrays are local copies here, released
    /// before `track` empties `reads`.
    private func readSameSources() -> Bool {
        let reads = self.reads
        let sources = self.sources
        guard reads.count == sources.count else { return false }
        for index in reads.indices where sources[index].source !== reads[index] { return false }
        for source in reads { source.addDependent(self) }
        return true
    }

    func read(_ source: any DerivationSource) {
        Self.add(source, to: &reads)
    }

    /// Appends `source` to `reads` unless it holds it already: one access to `reads`.
    private static func add(_ source: any DerivationSource, to reads: inout [any DerivationSource]) {
        if !holds(reads, source) { reads.append(source) }
    }

    /// Whether `sources` holds `source` itself.
    private static func holds(_ sources: [any DerivationSource], _ source: any DerivationSource) -> Bool {
        for held in sources where held === source { return true }
        return false
    }

    func sourceChanged() {
        // A derivation that reads what it changes would never end: it is computed once per change.
        guard !isComputing else { return }
        recompute()
    }

    func stop() {
        for old in sources { old.source?.removeDependent(self) }
        sources = []
        recompute = {}
    }
}
