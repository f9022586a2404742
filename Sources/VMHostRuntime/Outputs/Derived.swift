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
    /// This source among every source the process made: never reused, unlike its address.
    var serial: UInt64 { get }
    func addDependent(_ node: DerivedNode)
    func removeDependent(_ node: DerivedNode)
}

/// The sources of one derived value, found by what its computation reads.
///
/// A recomputation usually reads what the last one read, in the same order: each read is then
/// compared with the source expected next and nothing else happens, and the sources are left as
/// they are. Only a computation that reads another source, or fewer, changes them: a source no
/// longer read stops telling this node, a new one starts.
@HostActor
final class DerivedNode {
    // The state below is `@exclusivity(unchecked)`: each access is a read or a write, or a
    // standard-library operation on the value, that calls out to nothing while it lasts (a source
    // is told of this node after the access that found it ends), on the host thread
    // (docs/Design.md, "Exclusivity checks"). Every read of a property checks `computing`.

    /// The derivation computing now, which reads report to.
    @exclusivity(unchecked) static var computing: DerivedNode?

    @exclusivity(unchecked) var recompute: () -> Void = {}
    /// What the sources are, and how far the computation running now has read them again.
    @exclusivity(unchecked) private var state = Sources()
    @exclusivity(unchecked) private var isComputing = false

    private struct Source {
        /// The source's ``DerivationSource/serial``, compared without loading the reference.
        let serial: UInt64
        weak var source: (any DerivationSource)?
    }

    /// The serial the next source made gets.
    @exclusivity(unchecked) private static var nextSerial: UInt64 = 0

    /// A serial for a new source.
    static func makeSerial() -> UInt64 {
        nextSerial &+= 1
        return nextSerial
    }

    private struct Sources {
        /// The sources of the last computation, in the order it first read them; each holds this
        /// node among its dependents.
        var list: [Source] = []
        /// While computing: how many of `list` the computation has read again, in their order.
        var matched = 0
        /// While computing, once it read a source `list` did not have next: everything it read, in
        /// order, each once (`list` is then made again when it ends); empty until then.
        var strayed: [Source] = []
        var hasStrayed = false
    }

    // The loops below are written out: a closure made here and handed to the standard library
    // (`contains(where:)`, `map`) checks at run time that it runs on the host actor, on every call,
    // and a Login input runs these dozens of times.

    /// Runs `body`, making what it reads the sources of this derivation.
    func track<Result>(_ body: () -> Result) -> Result {
        let outer = Self.computing
        Self.computing = self
        isComputing = true
        // `state.matched` is 0 and nothing has strayed here: each computation ends so.
        let result = body()
        Self.computing = outer
        isComputing = false
        if Self.ends(&state) { return result }
        // The sources change: worked on outside `state`, since each is told.
        var sources = Sources()
        swap(&sources, &state)
        Self.finish(&sources, node: self)
        swap(&sources, &state)
        return result
    }

    /// Makes `source`, whose serial is `serial`, a source of the computation running now.
    func read(_ source: any DerivationSource, serial: UInt64) {
        if Self.read(source, serial: serial, into: &state) { source.addDependent(self) }
    }

    /// Notes the read of `source`; true when it joins the sources at once (it is then to be told).
    private static func read(_ source: any DerivationSource, serial id: UInt64, into state: inout Sources) -> Bool {
        if state.hasStrayed {
            for read in state.strayed where read.serial == id { return false }
            state.strayed.append(Source(serial: id, source: source))
            return false
        }
        let matched = state.matched
        if matched < state.list.count && state.list[matched].serial == id {
            state.matched = matched + 1
            return false
        }
        // Read again in this computation: nothing new.
        var index = 0
        while index < matched {
            if state.list[index].serial == id { return false }
            index += 1
        }
        if matched == state.list.count {
            // A source after all those of the last computation: it joins them at once.
            state.list.append(Source(serial: id, source: source))
            state.matched = matched + 1
            return true
        }
        // Another order, or a source skipped: the list is made again when the computation ends.
        state.hasStrayed = true
        state.strayed.reserveCapacity(state.list.count + 1)
        state.strayed.append(contentsOf: state.list[..<matched])
        state.strayed.append(Source(serial: id, source: source))
        return false
    }

    /// Ends a computation that read the sources of the last, in order, or some more (each told
    /// when read): true. False when the sources change otherwise (``finish(_:node:)``).
    private static func ends(_ state: inout Sources) -> Bool {
        guard !state.hasStrayed && state.matched == state.list.count else { return false }
        state.matched = 0
        return true
    }

    /// Makes what the computation just ended read the sources, telling each source that stops or
    /// starts being one.
    private static func finish(_ state: inout Sources, node: DerivedNode) {
        if !state.hasStrayed {
            // Read fewer than the last computation: the rest are no longer sources.
            let matched = state.matched
            var index = matched
            while index < state.list.count {
                state.list[index].source?.removeDependent(node)
                index += 1
            }
            state.list.removeSubrange(matched...)
            state.matched = 0
            return
        }
        for old in state.list where !holds(state.strayed, old.serial) {
            old.source?.removeDependent(node)
        }
        for new in state.strayed where !holds(state.list, new.serial) {
            new.source?.addDependent(node)
        }
        state.list = state.strayed
        state.strayed = []
        state.hasStrayed = false
        state.matched = 0
    }

    /// Whether `sources` holds the source `serial`.
    private static func holds(_ sources: [Source], _ serial: UInt64) -> Bool {
        for held in sources where held.serial == serial { return true }
        return false
    }

    func sourceChanged() {
        // A derivation that reads what it changes would never end: it is computed once per change.
        guard !isComputing else { return }
        recompute()
    }

    func stop() {
        var sources = Sources()
        swap(&sources, &state)
        for old in sources.list { old.source?.removeDependent(self) }
        recompute = {}
    }
}
